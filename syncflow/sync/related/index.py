"""The related index: which primaries' ``related`` keys an object of a related resource concerns.

A related object rarely points back at its primary (cert-manager's Secret names no Certificate), so
each ``related`` run records the objects it resolved, on both sides, whether they exist yet or not,
and the origin namespaces its label selectors list. The watcher looks an event's object up here and
enqueues the keys found. Redis holds it as a cache: if it is lost, resync re-runs the ``related`` key
of every primary that has no entry, which writes it again.

Layout (per agent): ``related:of:<primary key>`` is the JSON list of the ids a primary recorded;
``related:by:<id>`` the set of primary keys that recorded an id. An id is
``<endpoint>|<group>|<version>|<plural>|<cluster>|<namespace>|<name>``, the name ``*`` for every
object of a namespace. Each primary has at most a few hundred ids (resolution is bounded).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from redis import Redis

from syncflow.queue.keys import InvalidKeyError, ObjectKey
from syncflow.queue.layout import agent_prefix
from syncflow.sync.rule import Resource

EVERY = "*"


def object_id(endpoint: str, resource: Resource, cluster: str, namespace: str, name: str) -> str:
    """The index id of one object (``name`` :data:`EVERY`: any object of that namespace)."""
    return f"{endpoint}|{resource.group}|{resource.version}|{resource.plural}|{cluster}|{namespace}|{name}"


@dataclass(frozen=True)
class IndexedObject:
    """An id taken apart."""

    endpoint: str
    group: str
    version: str
    plural: str
    cluster: str
    namespace: str
    name: str

    @classmethod
    def parse(cls, object_id: str) -> IndexedObject:
        """The parts of an id made by :func:`object_id`."""
        return cls(*object_id.split("|"))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RelatedIndex:
    """Reads and writes one agent's related index."""

    def __init__(self, redis: Redis, agent: str) -> None:
        self.redis = redis
        self.prefix = f"{agent_prefix(agent)}related:"

    def _of(self, primary: ObjectKey | str) -> str:
        return f"{self.prefix}of:{primary}"

    def _by(self, object_id: str) -> str:
        return f"{self.prefix}by:{object_id}"

    def _recorded(self, primary: ObjectKey) -> set[str]:
        raw = self.redis.get(self._of(primary))
        return set(json.loads(_text(raw))) if isinstance(raw, bytes | str) else set()

    def record(self, primary: ObjectKey, ids: Iterable[str]) -> None:
        """Make ``ids`` the objects ``primary`` concerns (an empty list is recorded too)."""
        wanted = sorted(set(ids))
        old = self._recorded(primary)
        pipe = self.redis.pipeline()
        for stale in old - set(wanted):
            pipe.srem(self._by(stale), str(primary))
        for object_id in wanted:
            pipe.sadd(self._by(object_id), str(primary))
        pipe.set(self._of(primary), json.dumps(wanted))
        pipe.execute()

    def forget(self, primary: ObjectKey | str) -> None:
        """Drop everything ``primary`` recorded (its source object is gone)."""
        raw = self.redis.get(self._of(primary))
        pipe = self.redis.pipeline()
        for object_id in json.loads(_text(raw)) if isinstance(raw, bytes | str) else ():
            pipe.srem(self._by(object_id), str(primary))
        pipe.delete(self._of(primary))
        pipe.execute()

    def _primaries_of(self, rule: str) -> list[str]:
        return [
            _text(k)[len(self._of("")) :] for k in self.redis.scan_iter(match=self._of(f"related/{rule}/*"))
        ]

    def recorded_by_rule(self, rule: str) -> set[str]:
        """Every id a primary of ``rule`` recorded."""
        ids: set[str] = set()
        for primary in self._primaries_of(rule):
            raw = self.redis.get(self._of(primary))
            ids.update(json.loads(_text(raw)) if isinstance(raw, bytes | str) else ())
        return ids

    def forget_rule(self, rule: str) -> int:
        """Drop what every primary of ``rule`` recorded (the rule is gone); returns how many."""
        primaries = self._primaries_of(rule)
        for primary in primaries:
            self.forget(primary)
        return len(primaries)

    def unrecorded(self, primaries: Iterable[ObjectKey]) -> list[ObjectKey]:
        """The primaries that have recorded nothing (never run, or the index was lost)."""
        keys = list(primaries)
        pipe = self.redis.pipeline()
        for primary in keys:
            pipe.exists(self._of(primary))
        return [primary for primary, found in zip(keys, pipe.execute(), strict=True) if not found]

    def lookup(self, ids: Iterable[str]) -> set[ObjectKey]:
        """The ``related`` keys of the primaries that recorded any of ``ids``."""
        pipe = self.redis.pipeline()
        for object_id in ids:
            pipe.smembers(self._by(object_id))
        keys: set[ObjectKey] = set()
        for members in pipe.execute():
            for member in members:
                try:
                    keys.add(ObjectKey.parse(_text(member)))
                except InvalidKeyError:
                    continue
        return keys
