"""What the parked keys say about each rule — how many of its objects the ownership rules refused
(conflicts) and how many are parked for another reason — and the conditions a mode writes on the
config that made the rule (``Conflicts``, ``Parked``), the same in every mode. Both are True when
something is wrong, so a summary of an object's conditions that counts False ones (kcp's Ready on a
SyncTarget) never changes because of them.

One pass reads at most ``SCAN_LIMIT`` parked keys, so a flood of parked keys costs a bounded read; the
counts then say "at least".
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from syncflow.api.conditions import set_condition
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.keys import InvalidKeyError, ObjectKey
from syncflow.queue.service import QueueService
from syncflow.sync.keys import RELATED, STATUS, SYNC
from syncflow.sync.ownership import CONFLICT_CAUSES

Obj = dict[str, Any]
SCAN_LIMIT = 10_000
"""Most parked keys one pass reads."""
EXAMPLES = 3
"""Objects a condition's message names."""
_OBJECT_VERBS = frozenset({SYNC, STATUS, RELATED})


@dataclass
class Trouble:
    """The parked objects of one rule (or of every rule of one config)."""

    conflicts: set[tuple[str, str, str]] = field(default_factory=set)
    parked: set[tuple[str, str, str]] = field(default_factory=set)
    capped: bool = False
    """The scan stopped at ``SCAN_LIMIT``: the counts are a lower bound."""

    def add(self, other: Trouble) -> None:
        """Count ``other``'s objects too."""
        self.conflicts |= other.conflicts
        self.parked |= other.parked
        self.capped |= other.capped


def troubles(service: QueueService, rules: Collection[str]) -> dict[str, Trouble]:
    """The parked objects of each of ``rules`` (a rule with none is absent)."""
    found: dict[str, Trouble] = {}
    scanned, capped = 0, False
    for queue in service.queues.values():
        names: list[str] = []
        for name in queue.parked_names():
            scanned += 1
            if scanned > SCAN_LIMIT:
                capped = True
                break
            key = _parsed(name)
            if key is not None and key.rule in rules and key.verb in _OBJECT_VERBS:
                names.append(name)
        for start in range(0, len(names), 500):
            for failure in queue.failures(names[start : start + 500]):
                key = ObjectKey.parse(failure.key)
                trouble = found.setdefault(key.rule, Trouble())
                target = trouble.conflicts if failure.cause in CONFLICT_CAUSES else trouble.parked
                target.add((key.cluster, key.namespace, key.name))
        if capped:
            break
    for trouble in found.values():
        trouble.capped = capped
    return found


def total(found: dict[str, Trouble], rules: Iterable[str]) -> Trouble:
    """The parked objects of all of ``rules`` together."""
    summed = Trouble()
    for rule in rules:
        if rule in found:
            summed.add(found[rule])
    return summed


def conditions(existing: Iterable[Obj] | None, trouble: Trouble, generation: int | None = None) -> list[Obj]:
    """``existing`` with ``Conflicts`` (objects whose copy's place holds an object syncflow may not
    touch) and ``Parked`` (objects parked for any other reason) set from ``trouble``."""
    updated = list(existing or ())
    for type, objects, reason, what, fine in (
        (
            "Conflicts",
            trouble.conflicts,
            "ObjectsInConflict",
            "not synced, refused by the ownership rules (their Events say why)",
            ("NoConflicts", "no object is refused by the ownership rules"),
        ),
        (
            "Parked",
            trouble.parked,
            "ObjectsParked",
            "parked (syncflow failures list shows why; replay once fixed)",
            ("NothingParked", "no object is parked"),
        ),
    ):
        if objects:
            updated = set_condition(
                updated, type, True, reason, _count(objects, trouble.capped, what), generation
            )
        else:
            updated = set_condition(updated, type, False, *fine, generation)
    return updated


def _count(objects: set[tuple[str, str, str]], capped: bool, what: str) -> str:
    count = f"{'at least ' if capped else ''}{len(objects)} object{'' if len(objects) == 1 else 's'}"
    names = ", ".join(f"{ns}/{name}" if ns else name for _, ns, name in sorted(objects)[:EXAMPLES])
    more = ", …" if len(objects) > EXAMPLES else ""
    return f"{count} {what}: {names}{more}"


def _parsed(name: str) -> ObjectKey | None:
    try:
        return ObjectKey.parse(name)
    except InvalidKeyError:
        return None


def report(api: JsonApi, path: str, obj: Obj, trouble: Trouble) -> bool:
    """Write ``Conflicts`` and ``Parked`` into the status of config ``obj`` at ``path`` (its ``/status``
    subresource), only when they change; True when written."""
    old = obj.get("status") or {}
    generation = obj["metadata"].get("generation")
    updated = conditions(old.get("conditions"), trouble, int(generation) if generation is not None else None)
    if updated == old.get("conditions"):
        return False
    version = obj["metadata"]["resourceVersion"]
    patch = {"metadata": {"resourceVersion": version}, "status": {"conditions": updated}}
    api.merge_patch(f"{path}/status", patch)
    return True
