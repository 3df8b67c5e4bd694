"""The keys a watch event of a rule's source or target adds (one mapper per watch: each remembers
what it saw, see ``syncflow.sync.changes``)."""

from __future__ import annotations

from typing import Any

from syncflow.kube.refs import ObjectRef
from syncflow.queue.keys import ObjectKey
from syncflow.sync import filters
from syncflow.sync.changes import (
    Fingerprints,
    filters_copy_changes,
    filters_source_changes,
    spec_view,
    status_view,
)
from syncflow.sync.keys import RELATED, STATUS, SYNC, key_for, owner_ref
from syncflow.sync.merge import managed_view
from syncflow.sync.reconciler import may_return_status
from syncflow.sync.rule import SyncRule


class SourceKeys:
    """A source object's event adds its ``sync`` key — unless only its status changed — and its
    ``related`` key when the rule has related resources."""

    def __init__(self, rule: SyncRule) -> None:
        self.rule = rule
        self.related = [RELATED] if rule.related else []
        self.seen = Fingerprints(spec_view) if filters_source_changes(rule) else None

    def __call__(self, type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
        if obj is not None and type != "DELETED" and not filters.concerns(self.rule, obj):
            return []  # neither selected nor held by us: nothing to do for it
        verbs = [SYNC, *self.related]
        if self.seen is not None and obj is not None:
            if type == "DELETED":
                self.seen.forget(ref)
            elif not self.seen.changed(ref, obj):
                verbs = self.related  # a status-only change (e.g. our status return's echo)
        return [key_for(verb, self.rule, ref) for verb in verbs]


class TargetKeys:
    """A copy's deletion adds its source's ``sync`` key (which re-creates it); any other change adds
    the ``status`` key when the copy's status changed (not when it has none, e.g. our create's echo),
    the ``sync`` key when the rule reverts drift and the copy's content changed (our own writes'
    echoes are dropped by the queue), and the ``related`` key (related objects are named by the
    copy)."""

    def __init__(self, rule: SyncRule) -> None:
        self.rule = rule
        self.related = [RELATED] if rule.related else []
        self.statuses = Fingerprints(status_view) if filters_copy_changes(rule) else None
        self.contents = Fingerprints(managed_view) if rule.drift == "revert" else None

    def __call__(self, type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
        owner = owner_ref(obj) if obj is not None else None
        if obj is None or owner is None:
            return []
        if type == "DELETED":
            for seen in (self.statuses, self.contents):
                if seen is not None:
                    seen.forget(ref)
            return [key_for(SYNC, self.rule, owner)]
        verbs = [SYNC] if self.contents is not None and self._drifted(ref, obj, owner) else []
        # a copy without a status to return (or of a rule that returns none) is not digested at all
        if may_return_status(self.rule, obj) and (self.statuses is None or self.statuses.changed(ref, obj)):
            verbs.append(STATUS)
        return [key_for(verb, self.rule, owner) for verb in (*verbs, *self.related)]

    def _drifted(self, ref: ObjectRef, obj: dict[str, Any], owner: ObjectRef) -> bool:
        """Whether the content of a copy of a source in the rule's own logical cluster changed (a
        reverting rule serves one workspace, named by its logical cluster: an object whose labels name
        a source elsewhere is no copy it made, and must not send its sync looking for that source)."""
        assert self.contents is not None
        changed = self.contents.changed(ref, obj)
        return changed and self.rule.source.cluster in ("", owner.cluster)
