"""Redis round trips of the processes under test, counted from ``MONITOR`` on a private Redis.

``INFO commandstats`` also counts the commands a Lua script runs, so it cannot tell round trips from
work inside one script call; ``MONITOR`` can: those lines say ``[db lua]``. A ``MULTI … EXEC``
transaction (one pipelined round trip) counts once, as ``MULTI``; a pipeline without a transaction
still counts each command, so the figure is an upper bound. The benchmark's own connections (client
name ``bench``) are left out; a window is delimited by ``ECHO`` markers.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import subprocess
from collections import Counter
from pathlib import Path

from redis import Redis

from bench.support import BENCH_CLIENT
from syncflow.queue.scripts import Scripts

_LINE = re.compile(r"^[\d.]+ \[\d+ (\S+)\] (.*)$")
_MARK = "syncflow-bench-window:"


def _script_names(redis: Redis) -> dict[str, str]:
    """SHA-1 → name of the queue's Lua scripts, so EVALSHA calls are counted by script."""
    scripts = Scripts.register(redis)
    return {getattr(scripts, f.name).sha: f.name for f in dataclasses.fields(scripts)}


class RoundTrips:
    """A ``redis-cli monitor`` writing every command to a file while the benchmark runs."""

    def __init__(self, url: str, path: Path) -> None:
        self.url, self.path = url, path
        self.redis = Redis.from_url(url, client_name=BENCH_CLIENT)
        self._bench: set[str] = set()
        with path.open("wb") as out:
            self.process = subprocess.Popen(["redis-cli", "-u", url, "monitor"], stdout=out)

    def mark(self, label: str) -> None:
        """Open or close window ``label`` (the ECHO is the benchmark's, so it is not counted)."""
        self.redis.echo(f"{_MARK}{label}")
        self._bench |= {c["addr"] for c in self.redis.client_list() if c.get("name") == BENCH_CLIENT}

    def stop(self) -> None:
        """Stop the monitor (it has then written everything)."""
        self.process.terminate()
        self.process.wait(timeout=10)
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
