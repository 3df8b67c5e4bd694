"""Which watch events change what a task reads: the rest is no work.

A rule's sync reads the source object's metadata and spec (every field but ``status``); a source
event that changes only the status — above all the echo of syncflow's own status return, which the
status task writes to the source — would run a sync that writes nothing. A status run reads the
copy's status; a copy event that leaves it as it was (a label, a controller's metadata write) would
run one that writes nothing. ``Fingerprints`` remembers, per object, a digest of the part a task
reads and says whether an event changed it. It is bounded: an object it forgot (or never saw)
counts as changed, so the worst a full table costs is the run it would have cost anyway.

Rules whose runs may read more are never filtered: a sync of a status ``carry`` rule (upsync copies
the source's status) or of a rule with spec mutations (a mutation may read any field), a status run
of a rule with status mutations (they read the whole copy and the source).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from syncflow.kube.refs import ObjectRef
from syncflow.sync.rule import Mutate, SyncRule

MAX_TRACKED = 50_000
"""Objects remembered per watch (about 200 bytes each); the least recently seen go first."""

_BOOKKEEPING = frozenset({"resourceVersion", "managedFields", "generation"})

View = Callable[[Mapping[str, Any]], Any]


def spec_view(obj: Mapping[str, Any]) -> Any:
    """What a sync reads of a source object: all but its status and bookkeeping fields."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _BOOKKEEPING}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def status_view(obj: Mapping[str, Any]) -> Any:
    """What a status run reads of a copy: its status."""
    return obj.get("status")


def filters_source_changes(rule: SyncRule) -> bool:
    """Whether the rule's sync ignores the source's status, so a status-only change needs no sync."""
    return rule.status != "carry" and not any(isinstance(t, Mutate) and t.spec for t in rule.transforms)


def filters_copy_changes(rule: SyncRule) -> bool:
    """Whether the rule's status run reads only the copy's status (no status mutations)."""
    return not any(isinstance(t, Mutate) and t.status for t in rule.transforms)


class Fingerprints:
    """Digests of the ``view`` of the objects last seen, most recently seen last. Not thread-safe:
    one per watch."""

    def __init__(self, view: View, limit: int = MAX_TRACKED) -> None:
        self.view = view
        self.limit = limit
        self._seen: OrderedDict[ObjectRef, bytes] = OrderedDict()

    def changed(self, ref: ObjectRef, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj``'s view differs from the last version of ``ref`` seen (True for an object not
        remembered); remembers it."""
        encoded = orjson.dumps(self.view(obj), option=orjson.OPT_SORT_KEYS)
        digest = hashlib.blake2b(encoded, digest_size=16).digest()
        previous = self._seen.pop(ref, None)
        self._seen[ref] = digest
        if len(self._seen) > self.limit:
            self._seen.popitem(last=False)
        return previous != digest

    def forget(self, ref: ObjectRef) -> None:
        """Drop what is known of ``ref`` (it was deleted)."""
        self._seen.pop(ref, None)
