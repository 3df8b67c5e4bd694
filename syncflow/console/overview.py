"""The overview's counts: every key of the agent's queues (that the scope allows) by state, per rule
and per workspace, and each queue's depth and oldest pending key. It scans, so it is bounded: at most
``MAX_ENTRIES`` structure entries (beyond them the counts are ``partial``), at most ``MAX_GROUPS``
rules and workspaces (the rest add up under ``OTHER``), and ``Counter`` caches the result for a few
seconds, so a page polling every two seconds costs one scan however many viewers poll."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from redis import Redis

from syncflow.console.filters import Scope
from syncflow.console.keystate import SCANNED, read_states
from syncflow.console.models import Counts, GroupCounts, QueueDepth, State
from syncflow.console.scanning import scan_step
from syncflow.queue.layout import KEYED_QUEUES, QueueLayout

SCAN_COUNT = 1000
MAX_ENTRIES = 500_000
"""Structure entries one count reads at most (about a second of work)."""
MAX_GROUPS = 200
"""Rules and workspaces counted by name at most; the rest count under ``OTHER``."""
OTHER = "(other)"
CACHE_SECONDS = 5.0


@dataclass
class Tally:
    """What one scan of the queues counted."""

    totals: Counts = field(default_factory=Counts)
    rules: dict[str, GroupCounts] = field(default_factory=dict)
    workspaces: dict[str, GroupCounts] = field(default_factory=dict)
    queues: list[QueueDepth] = field(default_factory=list)
    scanned: int = 0
    partial: bool = False

    def count(self, key: str, state: State, n: int = 1) -> None:
        _, rule, workspace, _, _ = key.split("/")
        self.totals.add(state, n)
        _group(self.rules, rule).add(state, n)
        _group(self.workspaces, workspace).add(state, n)


def _group(groups: dict[str, GroupCounts], name: str) -> GroupCounts:
    if name not in groups and len(groups) >= MAX_GROUPS:
        name = OTHER
    if name not in groups:
        groups[name] = GroupCounts(name=name)
    return groups[name]


def tally(redis: Redis, agent: str, scope: Scope) -> Tally:
    """Count every visible key once, by the structure its state lives in. Synced keys are counted from
    K alone (no per-key reads): K's count, less the keys found in another state that K also holds."""
    result = Tally()
    budget = MAX_ENTRIES
    now_ms = time.time() * 1000
    for queue in KEYED_QUEUES:
        layout = QueueLayout(agent, queue)
        depth, oldest = 0, None
        for structure in SCANNED[None]:
            cursor = None
            while cursor != 0 and budget > 0:
                cursor, names = scan_step(
                    redis, layout.key(structure), structure, cursor or 0, "*", SCAN_COUNT
                )
                budget -= len(names)
                result.scanned += len(names)
                visible = [n for n in names if scope.allows_key(n)]
                if structure == "K":
                    for name in visible:
                        result.count(name, "synced")
                    continue
                for state in read_states(redis, layout, visible):
                    if state is None or state.home != structure:
                        continue
                    result.count(state.key, state.state)
                    if state.synced:  # K holds it too: it is not synced now
                        result.count(state.key, "synced", -1)
                    if state.state == "pending":
                        depth += 1
                        if state.pending_since is not None:
                            age = max(0.0, now_ms / 1000 - state.pending_since.timestamp())
                            oldest = age if oldest is None else max(oldest, age)
            if budget <= 0:
                result.partial = True
        result.queues.append(QueueDepth(queue=queue, depth=depth, oldest_pending_seconds=oldest))
    return result


class Counter:
    """``tally`` cached for ``CACHE_SECONDS``; concurrent callers share one scan."""

    def __init__(self, count: Callable[[], Tally], ttl: float = CACHE_SECONDS) -> None:
        self._count = count
        self._ttl = ttl
        self._lock = threading.Lock()
        self._cached: tuple[float, Tally] | None = None

    def get(self) -> Tally:
        """The latest tally, counted again when older than the TTL."""
        with self._lock:
            if self._cached is None or time.monotonic() - self._cached[0] > self._ttl:
                self._cached = (time.monotonic(), self._count())
            return self._cached[1]

    def forget(self) -> None:
        """Count again on the next ``get`` (after a replay)."""
        with self._lock:
            self._cached = None


def generated() -> datetime:
    """Now, for the overview's timestamp."""
    return datetime.now(UTC)
