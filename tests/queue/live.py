"""One live agent of the integration tests: settings, a producer-side queue service, its processes."""

from __future__ import annotations

import itertools
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from redis import Redis

from syncflow.config import Settings
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService

if TYPE_CHECKING:
    from tests.queue.conftest import Processes


@dataclass
class Run:
    run: str
    start: int
    end: int | None
    version: int


@dataclass
class Live:
    """One agent: its settings, a producer-side queue service and its worker/beat processes."""

    settings: Settings
    service: QueueService
    processes: Processes

    @property
    def redis(self) -> Redis:
        return self.service.redis

    def data(self, name: str) -> str:
        return f"sf:{self.settings.agent_name}:test:{name}"

    def event(self, key: ObjectKey) -> None:
        """The object changed (its version goes up), then the watch adds its key."""
        self.redis.incr(self.data(f"ver:{key}"))
        self.service.add(key)

    def version(self, key: ObjectKey) -> int:
        return int(self.redis.get(self.data(f"ver:{key}")) or 0)

    def runs(self, key: ObjectKey) -> list[Run]:
        runs: dict[str, Run] = {}
        for entry in self.redis.lrange(self.data(f"runs:{key}"), 0, -1):
            text = entry.decode() if isinstance(entry, bytes) else entry
            kind, run, at, version = text.split("|")
            if kind == "S":
                runs[run] = Run(run, int(at), None, int(version))
            else:
                runs[run].end = int(at)
        return sorted(runs.values(), key=lambda r: r.start)

    def caught_up(self, key: ObjectKey) -> bool:
        """A finished run started after the key's last add (it saw the latest version)."""
        return any(r.end is not None and r.version == self.version(key) for r in self.runs(key))

    def idle(self) -> bool:
        return all(s.dirty == s.pending == s.leased == s.delayed == 0 for s in self.service.stats())

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(Path(sys.executable).parent / "syncflow"), *args],
            env=self.processes.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


def assert_never_overlaps(live: Live, key: ObjectKey, killed_at: int | None = None) -> None:
    """Runs of one key never overlap; a run cut short by SIGKILL lasted until ``killed_at``."""
    intervals = []
    for run in live.runs(key):
        end = run.end if run.end is not None else killed_at
        assert end is not None, f"{key}: run {run.run} never ended and nothing was killed"
        intervals.append((run.start, end, run.run))
    for (_, end, first), (start, _, second) in itertools.pairwise(intervals):
        assert end <= start, f"{key}: run {second} started before {first} ended"
