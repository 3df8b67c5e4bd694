"""Child processes of the all-in-one agent and the demo: each in its own process group, logging to a
file, stopped together; how to run ``syncflow`` itself as a child."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from syncflow.util.logs import log_event

logger = logging.getLogger(__name__)

T = TypeVar("T")


def syncflow_command() -> list[str]:
    """How to run ``syncflow``: the entry point next to this Python, else through the interpreter."""
    script = Path(sys.executable).parent / "syncflow"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from syncflow.cli import main; main()"]


def child_env(settings: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without any ``SYNCFLOW_*`` variable, plus ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCFLOW_")}
    return {**env, **settings}


class StepError(RuntimeError):
    """A readiness check or scenario step did not succeed; ``logs`` name the children to show."""

    def __init__(self, message: str, logs: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.logs = tuple(logs)


EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
DEFAULT_EPHEMERAL_RANGE = (32768, 60999)  # Linux's; below it is also below IANA's 49152-65535
LOWEST_CHOSEN_PORT = 15000  # below it sit the ports that well-known services listen on
_handed_out: set[int] = set()


def ephemeral_range() -> tuple[int, int]:
    """The ports the kernel hands to a bind to port 0 and to outgoing connections (inclusive)."""
    try:
        low, high = EPHEMERAL_RANGE_FILE.read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL_RANGE


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    """A TCP port on loopback that is free right now, for a child to listen on later.

    The port lies below the kernel's ephemeral range, so no bind to port 0 (a devcluster, a private
    redis-server) and no outgoing connection can take it before the child binds it; this process
    never hands out the same port twice. Where the ephemeral range leaves no room, the kernel chooses.
    """
    low, _ = ephemeral_range()
    choices = range(LOWEST_CHOSEN_PORT, low)
    for _ in range(min(len(choices), 200)):
        port = random.choice(choices)
        if port not in _handed_out and _bindable(port):
            _handed_out.add(port)
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Child:
    """One running child process and its log file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path


@dataclass
class Stack:
    """Starts children in ``workdir`` and stops all of them (whole process groups) at the end.

    The PIDs (each also its process group id) are written to ``workdir/pids``, one ``name pid`` a line.
    """

    workdir: Path
    children: list[Child] = field(default_factory=list)

    def start(self, name: str, argv: Sequence[str], env: dict[str, str] | None = None) -> Child:
        """Start ``argv`` in a new session with stdout and stderr appended to ``<workdir>/<name>.log``.

        Call it from the main thread: on Linux the child is sent SIGTERM when the thread that started
        it ends, so a SIGKILLed parent leaves no child running."""
        log = self.workdir / f"{name}.log"
        with log.open("ab") as out:
            process = subprocess.Popen(
                list(argv),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_stop_with_parent(),  # noqa: PLW1509 (two system calls, no Python lock taken)
            )
        child = Child(name, process, log)
        self.children.append(child)
        with (self.workdir / "pids").open("a") as pids:
            pids.write(f"{name} {process.pid}\n")
        log_event(logger, "demo.child.started", name=name, pid=process.pid, log=str(log))
        return child

    def check(self) -> None:
        """Raise ``StepError`` if any child has exited."""
        for child in self.children:
            code = child.process.poll()
            if code is not None:
                raise StepError(f"{child.name} exited with code {code}", [child.name])

    def wait(self, predicate: Callable[[], T | None], timeout: float, what: str, logs: Sequence[str]) -> T:
        """Poll ``predicate`` until it returns a value other than None/False, failing after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            self.check()
            value = predicate()
            if value is not None and value is not False:
                return value
            if time.monotonic() > deadline:
                raise StepError(f"timed out after {timeout:.0f}s waiting for {what}", logs)
            time.sleep(0.1)

    def log_text(self, name: str) -> str:
        """The whole log of child ``name`` (empty if there is none)."""
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def tail(self, name: str, lines: int = 25) -> str:
        """The last ``lines`` lines of child ``name``'s log, leaving out the once-a-second queue pump."""
        kept = [line for line in self.log_text(name).splitlines() if "syncflow.pump[" not in line]
        return "\n".join(kept[-lines:])

    def stop_child(self, name: str, timeout: float = 15.0) -> None:
        """Stop one child (SIGTERM to its process group, SIGKILL after ``timeout``)."""
        for child in [c for c in self.children if c.name == name]:
            _signal_group(child, signal.SIGTERM)
            try:
                child.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _signal_group(child, signal.SIGKILL)
                child.process.wait()
            self.children.remove(child)

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM every process group (newest first), then SIGKILL what is left after ``timeout``."""
        for child in reversed(self.children):
            _signal_group(child, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for child in reversed(self.children):
            try:
                child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log_event(logger, "demo.child.killed", level=logging.WARNING, name=child.name)
        for child in self.children:
            _signal_group(child, signal.SIGKILL)  # pool processes that outlived their leader, or a hang
            child.process.wait()
        self.children.clear()


PR_SET_PDEATHSIG = 1  # prctl(2): the signal the kernel sends a process when its parent dies


def _stop_with_parent() -> Callable[[], None] | None:
    """On Linux, a ``preexec_fn`` that has the kernel SIGTERM the child when this process dies, even
    by SIGKILL (a child in its own session is otherwise re-parented and runs on); elsewhere None."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


def _signal_group(child: Child, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.process.pid, sig)
