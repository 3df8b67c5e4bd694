"""Redis round trips of the processes under test, counted from ``MONITOR`` on a private Redis.

``INFO commandstats`` also counts the commands a Lua script runs, so it cannot tell round trips from
work inside one script call; ``MONITOR`` can: those lines say ``[db lua]``. A ``MULTI … EXEC``
transaction (one pipelined round trip) counts once, as ``MULTI``; a pipeline without a transaction
still counts each command, so the figure is an upper bound. The benchmark's own connections (client
name ``bench``) are left out; a window is delimited by ``ECHO`` markers.

MONITOR is not free: Redis formats every command for the monitor and ``redis-cli`` writes it out, on
the same cores as the processes under test (on 2 cores it cost a 4,000-object run a fifth of its
throughput). So the monitor runs only inside a ``counting`` window, never during a timed run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import shlex
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from redis import Redis

from bench.support import BENCH_CLIENT
from syncflow.queue.scripts import Scripts

_LINE = re.compile(r"^[\d.]+ \[\d+ (\S+)\] (.*)$")
_MARK = "syncflow-bench-window:"
_DEADLINE = 10.0
"""Seconds to wait for the monitor to attach, and for a window's last line to be written."""


def _wait(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + _DEADLINE
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {_DEADLINE:.0f} s")
        time.sleep(0.05)


def _script_names(redis: Redis) -> dict[str, str]:
    """SHA-1 → name of the queue's Lua scripts, so EVALSHA calls are counted by script."""
    scripts = Scripts.register(redis)
    return {getattr(scripts, f.name).sha: f.name for f in dataclasses.fields(scripts)}


class RoundTrips:
    """``redis-cli monitor`` runs, each appending every command to one file, one per ``counting``
    window."""

    def __init__(self, url: str, path: Path) -> None:
        self.url, self.path = url, path
        self.redis = Redis.from_url(url, client_name=BENCH_CLIENT, socket_timeout=10)
        self._bench: set[str] = set()

    @contextlib.contextmanager
    def counting(self, label: str) -> Iterator[None]:
        """Monitor Redis while the block runs, as window ``label``; the monitor stops after it."""
        newest = max(int(c["id"]) for c in self.redis.client_list())  # an earlier monitor is older
        with self.path.open("ab") as out:
            start = out.tell()
            process = subprocess.Popen(["redis-cli", "-u", self.url, "monitor"], stdout=out)
        try:
            _wait(lambda: any(int(c["id"]) > newest for c in self._monitors()), "monitor attached")
            self._mark(label)
            yield
            self._mark(label)
            _wait(lambda: self._written(start).count(f"{_MARK}{label}") >= 2, f"window {label} written")
        finally:
            process.terminate()
            process.wait(timeout=10)

    def _mark(self, label: str) -> None:
        """Open or close window ``label`` (the ECHO is the benchmark's, so it is not counted)."""
        self.redis.echo(f"{_MARK}{label}")
        self._bench |= {c["addr"] for c in self.redis.client_list() if c.get("name") == BENCH_CLIENT}

    def _monitors(self) -> list[dict[str, str]]:
        """The clients in MONITOR mode (flag ``O``)."""
        return [c for c in self.redis.client_list() if "O" in c["flags"]]

    def _written(self, start: int) -> str:
        """What the monitors wrote from ``start`` on."""
        with self.path.open("rb") as log:
            log.seek(start)
            return log.read().decode(errors="replace")

    def close(self) -> None:
        """Close the benchmark's connection."""
        self.redis.close()

    def windows(self) -> dict[str, Counter[str]]:
        """Commands sent by non-benchmark clients between each window's two marks, by command (EVALSHA
        by script name)."""
        scripts = _script_names(self.redis)
        counts: dict[str, Counter[str]] = {}
        open_: str | None = None
        in_multi: set[str] = set()
        for line in self.path.read_text(errors="replace").splitlines():
            found = _LINE.match(line)
            if found is None:
                continue
            client, command = found.groups()
            if _MARK in command:
                label = command.split(_MARK, 1)[1].strip('"')
                open_ = None if open_ == label else label
                in_multi.clear()  # a transaction cut by a mark is not counted in the next window
                counts.setdefault(label, Counter())
                continue
            if open_ is None or client == "lua" or client in self._bench:
                continue
            try:
                words = shlex.split(command)
            except ValueError:
                words = command.split()
            name = words[0].upper() if words else "?"
            if client in in_multi:
                if name in ("EXEC", "DISCARD"):
                    in_multi.discard(client)
                continue
            if name == "MULTI":
                in_multi.add(client)
                name = "MULTI…EXEC"
            if name == "EVALSHA" and len(words) > 1:
                name = f"EVALSHA {scripts.get(words[1], words[1][:8])}"
            counts[open_][name] += 1
        return counts
