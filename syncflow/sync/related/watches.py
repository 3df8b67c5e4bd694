"""Events on related resources → ``related`` keys of the primaries they concern.

The sync manager runs one watch per (endpoint, resource) that any ready rule's related resources
use, on either side, shared by every rule. An event's object is looked up in the related index
(itself, and "any object of its namespace" for selectors); on its origin side a related resource's
``watch`` also maps it as api-syncagent does: ``by_owner`` through an owner reference of the
primary's kind on that side, ``by_selector`` to every primary there that matches. Those lookups read
the API; a failed one is logged and the index's answer still counts.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from syncflow.kube.refs import ObjectRef
from syncflow.queue.keys import ObjectKey
from syncflow.sync.endpoints import Endpoints
from syncflow.sync.keys import RELATED, key_for, owner_ref
from syncflow.sync.metadata import AGENT_LABEL
from syncflow.sync.reconciler import get_or_none
from syncflow.sync.related.index import EVERY, RelatedIndex, object_id
from syncflow.sync.related.resolve import MAX_OBJECTS
from syncflow.sync.rule import Related, Resource, SyncRule
from syncflow.sync.watches import Enqueue
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.watch")

Obj = dict[str, Any]
LOOKUP_BATCH = 500


def related_sides(rule: SyncRule) -> Iterator[tuple[str, Resource]]:
    """The (endpoint, resource) pairs a rule's related resources live in, both sides."""
    for related in rule.related:
        origin, destination = _endpoints(rule, related)
        yield origin, related.origin_resource
        yield destination, related.destination_resource


def _endpoints(rule: SyncRule, related: Related) -> tuple[str, str]:
    """(origin endpoint, destination endpoint) of a related resource."""
    if related.origin == "source":
        return rule.source.endpoint, rule.target.endpoint
    return rule.target.endpoint, rule.source.endpoint


def _owned_by(obj: Obj, resource: Resource) -> Iterator[str]:
    """Names of the owners of ``obj`` of ``resource``'s group, version and kind."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("apiVersion") == resource.api_version and ref.get("kind") == resource.kind:
            yield str(ref.get("name") or "")


class RelatedEvents:
    """The watch handler of one related resource on one endpoint; ``rules`` is kept current by the
    sync manager (the ready rules that use this resource)."""

    def __init__(
        self, endpoint: str, resource: Resource, index: RelatedIndex, endpoints: Endpoints, enqueue: Enqueue
    ) -> None:
        self.endpoint = endpoint
        self.resource = resource
        self.index = index
        self.endpoints = endpoints
        self.enqueue = enqueue
        self.rules: list[SyncRule] = []

    def _ids(self, ref: ObjectRef) -> list[str]:
        return [
            object_id(self.endpoint, self.resource, ref.cluster, ref.namespace, ref.name),
            object_id(self.endpoint, self.resource, ref.cluster, ref.namespace, EVERY),
        ]

    def _known(self, keys: Iterable[ObjectKey]) -> set[ObjectKey]:
        """Keys of rules this watch serves (an entry of a rule that went away maps to nothing)."""
        names = {rule.name for rule in self.rules}
        return {key for key in keys if key.rule in names}

    def on_event(self, type: str, obj: Obj, ref: ObjectRef) -> None:
        """One event: the index's keys and those of each ``watch`` rule, at event priority."""
        keys = self._known(self.index.lookup(self._ids(ref)))
        for rule in self.rules:
            for related in rule.related:
                if related.watch is not None and self._is_origin_of(rule, related):
                    keys.update(self._watched(rule, related, obj, ref))
        if keys:
            self.enqueue(sorted(keys), False)

    def on_resync(self, refs: set[ObjectRef]) -> None:
        """A (re)list: the index's keys of every object listed, in bulk."""
        ordered = sorted(refs)
        for start in range(0, len(ordered), LOOKUP_BATCH):
            batch = ordered[start : start + LOOKUP_BATCH]
            keys = self._known(self.index.lookup(i for ref in batch for i in self._ids(ref)))
            if keys:
                self.enqueue(sorted(keys), True)

    def _is_origin_of(self, rule: SyncRule, related: Related) -> bool:
        return (_endpoints(rule, related)[0], related.origin_resource) == (self.endpoint, self.resource)

    def _watched(self, rule: SyncRule, related: Related, obj: Obj, ref: ObjectRef) -> set[ObjectKey]:
        assert related.watch is not None
        try:
            if related.origin == "source":
                return self._on_source_side(rule, related.watch.by_selector, obj, ref)
            return self._on_target_side(rule, related.watch.by_selector, obj, ref)
        except Exception as exc:  # a watch must not die of a failed lookup; resync catches up
            log_event(
                logger,
                "related.watch_lookup_failed",
                level=logging.WARNING,
                rule=rule.name,
                identifier=related.identifier,
                error=f"{type(exc).__name__}: {exc}",
            )
            return set()

    def _on_source_side(
        self, rule: SyncRule, by_selector: str | None, obj: Obj, ref: ObjectRef
    ) -> set[ObjectKey]:
        primary = rule.source.resource
        if by_selector is None:
            return {
                key_for(RELATED, rule, ObjectRef(ref.cluster, ref.namespace, name))
                for name in _owned_by(obj, primary)
                if name
            }
        api = self.endpoints.api(rule.source.endpoint, rule.source.cluster or ref.cluster)
        listed = api.get(primary.path(), labelSelector=by_selector, limit=str(MAX_OBJECTS)).get("items") or []
        return {
            key_for(
                RELATED,
                rule,
                ObjectRef(ref.cluster, i["metadata"].get("namespace", ""), i["metadata"]["name"]),
            )
            for i in listed
        }

    def _on_target_side(
        self, rule: SyncRule, by_selector: str | None, obj: Obj, ref: ObjectRef
    ) -> set[ObjectKey]:
        primary = rule.target.resource
        api = self.endpoints.api(rule.target.endpoint, rule.target.cluster or "")
        if by_selector is None:
            found = (
                get_or_none(api, primary.path(ref.namespace, name))
                for name in _owned_by(obj, primary)
                if name
            )
            copies = [copy for copy in found if copy is not None]
        else:
            selector = (
                f"{by_selector},{AGENT_LABEL}={rule.agent}" if by_selector else f"{AGENT_LABEL}={rule.agent}"
            )
            copies = (
                api.get(primary.path(), labelSelector=selector, limit=str(MAX_OBJECTS)).get("items") or []
            )
        return {key_for(RELATED, rule, owner) for copy in copies if (owner := owner_ref(copy)) is not None}
