"""The overview's counts: every key of the agent's queues (that the scope allows) by state, per rule
and per workspace, and each queue's depth and oldest pending key. It scans, so it is bounded: at most
``MAX_ENTRIES`` structure entries (beyond them the counts are ``partial``), at most ``MAX_GROUPS``
rules and workspaces (the rest add up under ``OTHER``), and the reader caches the result for a few
seconds (``syncflow.console.cache``), so a page polling every two seconds costs one count however many
viewers poll. Synced keys, the bulk, are counted inside Redis (``count.lua``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources

from redis import Redis

from syncflow.console.filters import Scope
from syncflow.console.keystate import SCANNED, read_states
from syncflow.console.models import Counts, GroupCounts, QueueDepth, State
from syncflow.console.scanning import scan_step
from syncflow.queue.layout import KEYED_QUEUES, QueueLayout
from syncflow.sync.keys import RELATED, STATUS, SYNC

SCAN_COUNT = 5000
"""COUNT of each SCAN call of the small structures (all but K): a few milliseconds of Redis time."""
COUNT_STEP = 2000
"""Entries of K one counting script call reads: below ten milliseconds of Redis time, so workers' scripts
never wait long behind it."""
MAX_ENTRIES = 500_000
"""Structure entries one count reads at most (about a second of work)."""
MAX_GROUPS = 200
"""Rules and workspaces counted by name at most; the rest count under ``OTHER``."""
OTHER = "(other)"
CONTROL = "(control)"
"""The rule row of every key that names no object (a mode's control plane, rule-wide work); such keys
count under no workspace."""
OBJECT_VERBS = (SYNC, STATUS, RELATED)
"""Verbs whose keys name one source object: they count under their rule and workspace."""


@dataclass
class Tally:
    """What one scan of the queues counted."""

    totals: Counts = field(default_factory=Counts)
    rules: dict[str, GroupCounts] = field(default_factory=dict)
    workspaces: dict[str, GroupCounts] = field(default_factory=dict)
    queues: list[QueueDepth] = field(default_factory=list)
    scanned: int = 0
    partial: bool = False


class _Groups:
    """Counts by (rule, workspace, state) in plain dicts while scanning (models only at the end)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, State], int] = {}

    def count(self, key: str, state: State, n: int = 1) -> None:
        verb, rule, workspace, _ = key.split("/", 3)
        if verb in OBJECT_VERBS:
            self.add(rule, workspace, state, n)
        else:
            self.add(CONTROL, "", state, n)

    def add(self, rule: str, workspace: str, state: State, n: int) -> None:
        group = (rule, workspace, state)
        self.counts[group] = self.counts.get(group, 0) + n

    def into(self, result: Tally) -> None:
        for (rule, workspace, state), n in self.counts.items():
            result.totals.add(state, n)
            _group(result.rules, rule).add(state, n)
            if workspace:
                _group(result.workspaces, workspace).add(state, n)


def _group(groups: dict[str, GroupCounts], name: str) -> GroupCounts:
    if name not in groups and len(groups) >= MAX_GROUPS:
        name = OTHER
    if name not in groups:
        groups[name] = GroupCounts(name=name)
    return groups[name]


_COUNT = (resources.files(__package__) / "count.lua").read_text(encoding="utf-8")


def _count_step(redis: Redis, name: str, cursor: int) -> tuple[int, dict[tuple[str, str], int]]:
    """One HSCAN step of K, counted per (rule, workspace) inside Redis (``count.lua``)."""
    following, *flat = redis.register_script(_COUNT)([name], [cursor, COUNT_STEP, *OBJECT_VERBS])
    seen = {}
    for i in range(0, len(flat), 2):
        rule, _, workspace = _text(flat[i]).partition("/")
        seen[(rule, workspace)] = int(flat[i + 1])
    return int(following), seen


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def tally(redis: Redis, agent: str, scope: Scope) -> Tally:
    """Count every visible key once, by the structure its state lives in. Synced keys are counted from
    K alone (no per-key reads): K's count, less the keys found in another state that K also holds."""
    result, groups = Tally(), _Groups()
    budget = MAX_ENTRIES
    now = time.time()
    visible = _scoped_object_key(scope) if scope.workspaces else None
    for queue in KEYED_QUEUES:
        layout = QueueLayout(agent, queue)
        depth, oldest = 0, None
        for structure in SCANNED[None]:
            cursor = None
            while cursor != 0 and budget > 0:
                if structure == "K":
                    cursor, seen = _count_step(redis, layout.key("K"), cursor or 0)
                    budget -= sum(seen.values())
                    result.scanned += sum(seen.values())
                    for (rule, workspace), n in seen.items():
                        if scope.allows(workspace):  # a control pair's "" only when unscoped
                            groups.add(rule, workspace, "synced", n)
                    continue
                cursor, names = scan_step(
                    redis, layout.key(structure), structure, cursor or 0, "*", SCAN_COUNT
                )
                budget -= len(names)
                result.scanned += len(names)
                if visible is not None:
                    names = [n for n in names if visible(n)]
                for state in read_states(redis, layout, names):
                    if state is None or state.home != structure:
                        continue
                    groups.count(state.key, state.state)
                    if state.synced:  # K holds it too: it is not synced now
                        groups.count(state.key, "synced", -1)
                    if state.state == "pending":
                        depth += 1
                        if state.pending_since is not None:
                            age = max(0.0, now - state.pending_since.timestamp())
                            oldest = age if oldest is None else max(oldest, age)
            if budget <= 0:
                result.partial = True
        result.queues.append(QueueDepth(queue=queue, depth=depth, oldest_pending_seconds=oldest))
    groups.into(result)
    return result


def _scoped_object_key(scope: Scope) -> Callable[[str], bool]:
    """A scoped viewer counts the object keys of its workspaces only: control keys are the agent's."""
    return lambda key: scope.allows_key(key) and key.split("/", 1)[0] in OBJECT_VERBS


def generated() -> datetime:
    """Now, for the overview's timestamp."""
    return datetime.now(UTC)
