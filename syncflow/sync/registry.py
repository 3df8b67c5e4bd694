"""The rule registry: which sync rules exist now, published by the watcher, read by every worker.

The leading watcher computes each rule from its mode's API objects and writes it here (a Redis hash
of the agent); workers look rules up by the name in a key. A rule is ``ready`` (sync with it),
``pending`` (it exists but cannot sync yet: keys wait and come back) or ``gone`` (its API object was
deleted or disabled, or its type deselected: its keys end). A pending or gone entry keeps the last
rule that was ready under its name, so what a rule made can be released after it went (``release``
keys). A name the registry does not know (the watcher has not published yet, or Redis was wiped) is
treated as pending, never as gone, so no key is ever dropped for want of a rule.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from redis import Redis
from redis.exceptions import WatchError

from syncflow.queue import ruleentries
from syncflow.queue.layout import registry_key
from syncflow.sync.rule import SyncRule

TOMBSTONE_TTL = 24 * 3600.0
"""How long a ``gone`` entry is kept, so late keys of a deleted rule still end quietly."""
PARSED_CACHE = 256
"""Parsed entries a process keeps (by their stored text), so reading a rule costs one HGET, no parsing."""


class RuleEntry(BaseModel):
    """One registry entry."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    state: Literal["ready", "pending", "gone"]
    rule: SyncRule | None = None
    reason: str = ""
    at: float = 0.0

    @classmethod
    def ready(cls, rule: SyncRule) -> RuleEntry:
        """A rule to sync with."""
        return cls(state="ready", rule=rule)

    @classmethod
    def pending(cls, reason: str) -> RuleEntry:
        """A rule that exists but cannot sync yet, and why."""
        return cls(state="pending", reason=reason)


UNKNOWN = RuleEntry.pending("the watcher has not published this rule (yet)")
RELEASED = "released"
"""The reason of a ``gone`` entry whose release has completed (``RuleWorker.release``)."""


class RuleRegistry:
    """Reads and writes one agent's rule registry."""

    def __init__(self, redis: Redis, agent: str) -> None:
        self.redis = redis
        self.agent = agent
        self.key = registry_key(agent)
        self._parsed: dict[bytes | str, RuleEntry] = {}

    # ----- workers -----

    def lookup(self, name: str) -> RuleEntry:
        """The current entry of rule ``name`` (read every time: a task never works with a rule that has
        changed since, e.g. a selector that now selects what it skipped). A task's first lookup of its
        key's rule takes the entry its claim read a moment before (``syncflow.queue.ruleentries``)."""
        delivered, handed = ruleentries.take(name)
        raw: bytes | str | None = handed if delivered else self.redis.hget(self.key, name)
        return self._entry(raw) if raw else UNKNOWN

    def _entry(self, raw: bytes | str) -> RuleEntry:
        """``raw`` decoded, from a bounded cache of the entries seen (a rule's JSON is decoded once)."""
        entry = self._parsed.get(raw)
        if entry is None:
            if len(self._parsed) >= PARSED_CACHE:
                self._parsed.clear()
            entry = self._parsed[raw] = _decode(raw)
        return entry

    def entries(self) -> dict[str, RuleEntry]:
        """Every entry, by name."""
        return {_text(name): _decode(raw) for name, raw in sorted(self.redis.hgetall(self.key).items())}

    def ready_rules(self) -> list[SyncRule]:
        """Every ready rule, by name."""
        return [e.rule for e in self.entries().values() if e.state == "ready" and e.rule is not None]

    def unreleased(self) -> list[str]:
        """Gone rules whose release has not completed (their objects may still hold a finalizer)."""
        return [name for name, entry in self.entries().items() if needs_release(entry)]

    # ----- the watcher -----

    def publish(self, wanted: Mapping[str, RuleEntry]) -> list[str]:
        """Make the registry hold ``wanted``; every other known rule becomes ``gone``.

        Compares with what the registry holds now (one read; entries seen before are not decoded
        again), so an entry another process wrote — a release that marked gone a rule still wanted, a
        wipe — is put right on the next pass. Writes only what differs; returns the names whose entry
        changed.
        """
        published = {_text(k): self._entry(v) for k, v in self.redis.hgetall(self.key).items()}
        now = time.time()
        carried = {name: _carry(published.get(name), entry) for name, entry in wanted.items()}
        changes = {
            name: entry.model_copy(update={"at": now})
            for name, entry in carried.items()
            if name not in published or published[name].model_copy(update={"at": 0.0}) != entry
        }
        expired: list[str] = []
        for name, old in published.items():
            if name in wanted:
                continue
            if old.state != "gone":
                changes[name] = RuleEntry(state="gone", rule=old.rule, at=now)
            elif now - old.at > TOMBSTONE_TTL:
                expired.append(name)
        if changes:
            self.redis.hset(self.key, mapping={name: e.model_dump_json() for name, e in changes.items()})
        if expired:
            self.redis.hdel(self.key, *expired)
        return sorted(changes)

    def mark_gone(self, name: str, reason: str = "", *, only_if_gone: bool = False) -> bool:
        """Record at once that rule ``name`` is gone (before its objects are released; ``RELEASED``
        after), keeping the last rule it had; with ``only_if_gone`` only while its entry still says
        gone (a rule the watcher published again meanwhile stays as published). True when written."""
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(self.key)  # type: ignore[no-untyped-call]
                    raw = pipe.hget(self.key, name)
                    current = _decode(raw) if raw else None
                    if only_if_gone and (current is None or current.state != "gone"):
                        pipe.unwatch()
                        return False
                    rule = current.rule if current is not None else None
                    entry = RuleEntry(state="gone", rule=rule, reason=reason, at=time.time())
                    pipe.multi()
                    pipe.hset(self.key, name, entry.model_dump_json())
                    pipe.execute()
                    return True
                except WatchError:
                    continue  # the entry changed between the read and the write: decide again

    def released(self, name: str) -> bool:
        """Whether rule ``name`` is gone and its release has completed since the watcher marked it so."""
        entry = self.lookup(name)
        return entry.state == "gone" and entry.reason == RELEASED


def needs_release(entry: RuleEntry) -> bool:
    """Whether a gone entry's rule still has to be released."""
    return entry.state == "gone" and entry.rule is not None and entry.reason != RELEASED


def _carry(old: RuleEntry | None, new: RuleEntry) -> RuleEntry:
    """A pending entry keeps the rule its name last had (a Cluster that goes NotReady, then is deleted,
    still has a rule to release)."""
    if new.state == "pending" and new.rule is None and old is not None and old.rule is not None:
        return new.model_copy(update={"rule": old.rule})
    return new


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _decode(raw: bytes | str) -> RuleEntry:
    try:
        return RuleEntry.model_validate_json(raw)
    except ValidationError:
        return RuleEntry.pending("the registry entry cannot be read (written by another syncflow version?)")
