"""All-in-one: one command runs a whole agent — Redis (unless given), the watcher, workers and beat.

Each role runs as its own child process (``syncflow watch|worker|beat`` with the settings passed as
``SYNCFLOW_*`` variables), logging to a file in the data directory; a child that exits is started
again after a growing delay; SIGINT/SIGTERM stops them all. This is how a single-binary syncer (kcp's
TMC syncer, an edge syncer) is run with syncflow; scaled deployments run the roles separately. With a
metrics address, the roles write their metrics to one multiprocess directory and this process serves
them, added up, on that address.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from syncflow.config import Settings
from syncflow.metrics import multiprocess
from syncflow.runtime import redis as redis_mod
from syncflow.runtime.stack import Child, Stack, StepError, child_env, free_port, syncflow_command
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.supervisor")

RESTART_CAP = 30.0
STABLE_AFTER = 60.0
"""A child that ran this long before exiting is restarted at once again (its failures are not counted)."""
SERVED_HERE = {"metrics_address", "health_address"}
"""Settings the roles do not get: this process serves the agent's metrics; the watcher gets a free
health port of its own."""


def settings_env(settings: Settings) -> dict[str, str]:
    """``SYNCFLOW_*`` variables that give a role these settings (but the addresses served here)."""
    env = {}
    for name, value in settings.model_dump(mode="json", exclude_defaults=True, exclude=SERVED_HERE).items():
        env[f"SYNCFLOW_{name.upper()}"] = json.dumps(value) if isinstance(value, dict | list) else str(value)
    return env


@dataclass
class Supervisor:
    """Runs an agent's roles as children of this process and keeps them running. With a metrics
    address, ``multiprocess.prepare`` must have run first (``syncflow.runtime.agentcli.run``)."""

    settings: Settings
    workdir: Path
    workers: int = 2
    stack: Stack = field(init=False)
    stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.stack = Stack(self.workdir)

    def _argv(self, role: str) -> list[str]:
        command = syncflow_command()
        level = self.settings.log_level
        if role == "worker":
            return [
                *command,
                "worker",
                "-c",
                str(self.workers),
                "-l",
                level,
                "-n",
                f"{self.settings.agent_name}@%h",
            ]
        if role == "beat":
            return [*command, "beat", "-l", level, "-s", str(self.workdir / "beat-schedule")]
        return [*command, "watch", "--health-address", f"127.0.0.1:{free_port()}"]

    def run(self, roles: tuple[str, ...] = ("watch", "worker", "beat")) -> int:
        """Start Redis (if no URL was given) and ``roles``; supervise until SIGINT/SIGTERM."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop.set())
        metrics = None
        try:
            if self.settings.metrics_address:  # the roles inherit the group's directory
                from syncflow.metrics import exposition

                metrics = exposition.serve(self.settings, "all")
            settings = self.settings
            if not settings.model_fields_set & {"redis_url"}:
                info = redis_mod.provide(self.stack, None)
                settings = settings.model_copy(update={"redis_url": info.url})
                log_event(logger, "supervisor.redis", redis=info.description)
            env = child_env(settings_env(settings))
            children = {role: self.stack.start(role, self._argv(role), env) for role in roles}
            log_event(logger, "supervisor.started", roles=",".join(roles), logs=str(self.workdir))
            self._supervise(children, env)
        except StepError as exc:
            log_event(logger, "supervisor.failed", level=logging.ERROR, error=str(exc))
            return 1
        finally:
            self.stack.stop()
            if metrics is not None:
                metrics.stop()
            log_event(logger, "supervisor.stopped")
        return 0

    def _supervise(self, children: dict[str, Child], env: dict[str, str]) -> None:
        restarts = dict.fromkeys(children, 0)
        started = dict.fromkeys(children, time.monotonic())
        while not self.stop.wait(0.5):
            for role, child in list(children.items()):
                code = child.process.poll()
                if code is None:
                    continue
                multiprocess.process_exited(child.process.pid)
                if time.monotonic() - started[role] > STABLE_AFTER:
                    restarts[role] = 0
                delay = min(RESTART_CAP, 2.0 ** restarts[role])
                log_event(
                    logger,
                    "supervisor.child_exited",
                    level=logging.WARNING,
                    role=role,
                    code=code,
                    restart_in=delay,
                    log=str(child.log),
                )
                if self.stop.wait(delay):
                    return
                self.stack.children.remove(child)
                children[role] = self.stack.start(role, self._argv(role), env)
                started[role] = time.monotonic()
                restarts[role] += 1
