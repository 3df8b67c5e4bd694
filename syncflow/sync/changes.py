"""Which source events change what a sync reads: a status-only change is no sync work.

A rule's sync reads the source object's metadata and spec (every field but ``status``); a watch event
that changes only the status — above all the echo of syncflow's own status return, which the status
task writes to the source — would run a sync that writes nothing. ``SpecChanges`` remembers, per
source object, a digest of everything but its status and bookkeeping fields, and says whether an
event changed it. It is bounded: an object it forgot (or never saw) counts as changed, so the worst a
full table costs is the reconcile it would have cost anyway.

Rules whose sync may read the source's status are never filtered: status ``carry`` (upsync copies
the status) and rules with spec mutations (a mutation may read any field).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import orjson

from syncflow.kube.refs import ObjectRef
from syncflow.sync.rule import Mutate, SyncRule

MAX_TRACKED = 50_000
"""Source objects remembered per watch (about 200 bytes each); the least recently seen go first."""

_BOOKKEEPING = frozenset({"resourceVersion", "managedFields", "generation"})


def filters_status_changes(rule: SyncRule) -> bool:
    """Whether the rule's sync ignores the source's status, so a status-only change needs no sync."""
    return rule.status != "carry" and not any(isinstance(t, Mutate) and t.spec for t in rule.transforms)


def _digest(obj: Mapping[str, Any]) -> bytes:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _BOOKKEEPING}
    view = {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}
    return hashlib.blake2b(orjson.dumps(view, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


class SpecChanges:
    """Digests of the last seen spec and metadata of source objects, most recently seen last."""

    def __init__(self, limit: int = MAX_TRACKED) -> None:
        self.limit = limit
        self._seen: OrderedDict[ObjectRef, bytes] = OrderedDict()

    def changed(self, ref: ObjectRef, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` differs from the last version of ``ref`` seen beyond its status (True for
        an object not remembered); remembers it."""
        digest = _digest(obj)
        previous = self._seen.pop(ref, None)
        self._seen[ref] = digest
        if len(self._seen) > self.limit:
            self._seen.popitem(last=False)
        return previous != digest

    def forget(self, ref: ObjectRef) -> None:
        """Drop what is known of ``ref`` (it was deleted)."""
        self._seen.pop(ref, None)
