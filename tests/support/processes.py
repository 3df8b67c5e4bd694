"""``syncflow`` subprocesses for integration tests: own process groups, logs in files, killed at teardown."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from syncflow.app.modes import MODES

REPO = Path(__file__).resolve().parents[2]


class SyncflowProcesses:
    """Named ``syncflow`` subprocesses sharing one environment; each logs to ``<log_dir>/<name>.log``."""

    def __init__(self, env: dict[str, str], log_dir: Path, cwd: Path = REPO) -> None:
        self.env = env
        self.log_dir = log_dir
        self.cwd = cwd
        self.running: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        """Start ``syncflow <args>`` in its own process group."""
        log = (self.log_dir / f"{name}.log").open("wb")
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "syncflow"), *args],
            cwd=self.cwd,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.running[name] = process
        return process

    def kill(self, which: str | subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
        """Signal a process group (by name or process) and wait for its leader."""
        process = self.running[which] if isinstance(which, str) else which
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        process.wait(timeout=KILL_WAIT)

    def stop_all(self) -> None:
        """Kill every process still running. An all-in-one supervisor gets SIGTERM first and up to
        ``STOP_GRACE`` seconds: it starts each role in a session of its own and stops them on SIGTERM,
        where SIGKILLed it would leave them running."""
        running = [process for process in self.running.values() if process.poll() is None]
        for process in filter(_supervises, running):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=STOP_GRACE)
        for process in running:
            if process.poll() is None:
                self.kill(process)

    def whole_logs(self) -> str:
        """Every line every process has logged so far."""
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.log_dir.glob("*.log")))

    def logs(self) -> str:
        """The tail of every log, for failure messages."""
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}"
            for p in sorted(self.log_dir.glob("*.log"))
        )


KILL_WAIT = 60.0
"""Seconds ``kill`` waits for the process: a worker's warm shutdown can wait out the broker socket's
30 s timeout on a read in flight before it restores its unacked messages and exits."""
STOP_GRACE = 20.0
"""Seconds ``stop_all`` gives an all-in-one to stop its roles (it gives each 15 s) before killing it."""


def _supervises(process: subprocess.Popen[bytes]) -> bool:
    """Whether ``process`` is an all-in-one (``syncflow <mode>`` without ``--role`` or with
    ``--role all``): a supervisor."""
    args = [str(arg) for arg in process.args] if isinstance(process.args, list) else []
    role = args[args.index("--role") + 1] if "--role" in args[:-1] else "all"
    return len(args) > 1 and args[1] in MODES and role == "all"


QUICK_AGENT = {
    "SYNCFLOW_LEASE_DURATION": "3",
    "SYNCFLOW_RENEW_DEADLINE": "2",
    "SYNCFLOW_RETRY_PERIOD": "0.5",
    "SYNCFLOW_BACKOFF_CAP": "2",
    # a SIGKILLed worker's leased keys come back after the lease TTL: keep it short in tests
    "SYNCFLOW_TASK_TIME_LIMIT": "10",
    "SYNCFLOW_LEASE_TTL": "15",
    # and the message a killed worker held is then republished: the pump treats an unacked message
    # as live only for pump_grace, which must not outlast the lease (default 60 s)
    "SYNCFLOW_PUMP_GRACE": "10",
}
"""An agent's settings for tests: a standby takes over, a failed key comes back and a killed worker's
work is redone within seconds."""
