"""One related object and its copy on the other side, as api-syncagent's object syncer treats related
objects: the copy carries no sync metadata and is found by its name; the last-applied state lives in
the primary's state Secret; an origin object on the rule's source side holds the rule's finalizer
until its copy is gone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi
from syncflow.mutation.mutator import compiled
from syncflow.queue.keys import ObjectKey
from syncflow.sync import state
from syncflow.sync.desired import managed_content, preview
from syncflow.sync.events import record_event
from syncflow.sync.merge import three_way_patch
from syncflow.sync.namespaces import create_in
from syncflow.sync.reconciler import (
    Sync,
    delete_exactly,
    get_or_none,
    set_finalizers,
)
from syncflow.sync.related.resolve import Found
from syncflow.sync.rule import Related, Resource
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.sync")

Obj = dict[str, Any]


@dataclass
class RelatedRun:
    """One related resource of one primary at work: both sides, and the state entries to write."""

    s: Sync
    key: ObjectKey
    related: Related
    primary: Obj
    """The primary on the rule's source side (events about related objects go there)."""
    origin: JsonApi
    destination: JsonApi
    origin_endpoint: str
    destination_endpoint: str
    origin_cluster: str
    """The origin side's logical cluster, as api-syncagent keys related state ("" on the service side)."""
    destination_cluster: str
    secret: Obj | None
    """The primary's state Secret as read at the start of the run."""
    entries: dict[str, Obj]
    """State entries (state key → content) to write at the end of the run."""

    @property
    def holds_finalizer(self) -> bool:
        """Origin objects on the rule's source side hold the rule's finalizer until their copy is gone."""
        return self.related.origin == "source" and self.s.rule.finalizer is not None

    def origin_path(self, found: Found) -> str:
        return self.related.origin_resource.path(found.origin_namespace, found.origin_name)

    def destination_path(self, found: Found) -> str:
        return self.related.destination_resource.path(found.namespace, found.name)


def _meta(obj: Obj) -> Obj:
    meta: Obj = obj["metadata"]
    return meta


def desired_copy(source: Obj, resource: Resource, namespace: str, name: str) -> Obj:
    """The copy of (spec-mutated) related object ``source``: its managed content under the destination's
    GVK, namespace and name, with no sync metadata (api-syncagent puts none on related copies)."""
    out = managed_content(source)
    meta = out["metadata"]
    meta["name"] = name
    meta.pop("namespace", None)
    if namespace and resource.namespaced:
        meta["namespace"] = namespace
    out.update(apiVersion=resource.api_version, kind=resource.kind)
    return out


def _release(run: RelatedRun, found: Found, obj: Obj) -> None:
    finalizer = run.s.rule.finalizer
    finalizers = _meta(obj).get("finalizers") or []
    if finalizer in finalizers:
        updated = set_finalizers(
            run.origin, run.origin_path(found), obj, [f for f in finalizers if f != finalizer]
        )
        run.s.record(run.origin_endpoint, updated)
        log_event(logger, "related.finalizer_released", key=str(run.key), origin=run.origin_path(found))


def _hold(run: RelatedRun, found: Found, obj: Obj) -> Obj:
    finalizer = run.s.rule.finalizer
    finalizers = _meta(obj).get("finalizers") or []
    if finalizer is None or finalizer in finalizers:
        return obj
    updated = set_finalizers(run.origin, run.origin_path(found), obj, [*finalizers, finalizer])
    run.s.record(run.origin_endpoint, updated)
    return updated


def remove_copy(run: RelatedRun, found: Found, obj: Obj | None, copy: Obj | None) -> bool:
    """Delete the copy, then release the origin object; True while the copy is still going away."""
    if copy is not None:
        if not _meta(copy).get("deletionTimestamp"):
            delete_exactly(run.destination, run.destination_path(found), copy)
            log_event(logger, "related.copy_deleted", key=str(run.key), target=run.destination_path(found))
        return True
    if obj is not None and run.holds_finalizer:
        _release(run, found, obj)
    return False


def sync_copy(run: RelatedRun, found: Found, obj: Obj | None, *, primary_deleting: bool = False) -> bool:
    """Bring the copy of related object ``obj`` (None: not there) in line; True while waiting for a
    deletion. While the primary is being deleted, copies are removed if the related resource cleans
    up (``cleanup``, or an origin on the rule's source side) and left alone otherwise."""
    related = run.related
    on_target = run.destination_endpoint == run.s.rule.target.endpoint
    if on_target and run.s.reach.protects(related.destination_resource, found.namespace, found.name):
        log_event(logger, "related.out_of_reach", key=str(run.key), target=run.destination_path(found))
        return False  # a system object: never written or deleted
    copy = get_or_none(run.destination, run.destination_path(found))
    if primary_deleting:
        cleans_up = related.cleanup or related.origin == "source"
        return remove_copy(run, found, obj, copy) if cleans_up else False
    if obj is None:
        return False
    if _meta(obj).get("deletionTimestamp"):
        return remove_copy(run, found, obj, copy) if run.holds_finalizer else False
    if run.holds_finalizer:
        obj = _hold(run, found, obj)
    resource = related.destination_resource
    other = (
        copy
        if copy is not None
        else preview(
            obj,
            api_version=resource.api_version,
            kind=resource.kind,
            namespace=found.namespace,
            name=found.name,
        )
    )
    source = compiled("spec", related.mutation).apply(obj, other)
    wanted = desired_copy(source, resource, found.namespace, found.name)
    content = managed_content(source)
    entry = state.state_key(run.origin_cluster, "", found.origin_namespace, found.origin_name)
    last = state.read_state(run.secret, entry)
    if copy is None:
        copy = _create(run, found, wanted)
        if copy is None:
            return False  # created by someone else meanwhile: the next run merges into it
        run.entries[entry] = content
    elif not _meta(copy).get("deletionTimestamp"):
        patch = three_way_patch(last, wanted, copy)
        if patch is not None:
            copy = run.destination.merge_patch(run.destination_path(found), patch)
            run.s.record(run.destination_endpoint, copy)
            fields = ",".join(sorted(patch))
            log_event(
                logger, "related.updated", key=str(run.key), target=run.destination_path(found), fields=fields
            )
        if last != content:
            run.entries[entry] = content
    else:
        return False  # someone deletes the copy: it is created again once it is gone
    if related.sync_status:
        _carry_status(run, found, source, copy)
    return False


def _create(run: RelatedRun, found: Found, wanted: Obj) -> Obj | None:
    namespace = found.namespace if run.related.destination_resource.namespaced else ""
    collection = run.related.destination_resource.path(found.namespace)
    try:
        created = create_in(run.destination, collection, namespace, wanted)
    except ApiException as exc:
        if exc.status != 409:
            raise
        return None
    run.s.record(run.destination_endpoint, created)
    log_event(logger, "related.created", key=str(run.key), target=run.destination_path(found))
    return created


def _carry_status(run: RelatedRun, found: Found, source: Obj, copy: Obj) -> None:
    """``syncStatus``: the origin's status goes to the copy's ``/status`` (a 404 there is reported)."""
    if "status" not in source or source["status"] == copy.get("status"):
        return
    try:
        updated = run.destination.replace(
            f"{run.destination_path(found)}/status", {**copy, "status": source["status"]}
        )
    except ApiException as exc:
        if exc.status != 404:
            raise
        record_event(
            run.s.source(run.key),
            run.primary,
            "StatusSubresourceMissing",
            f"cannot sync the status of related {run.related.identifier} {found.namespace}/{found.name}: the "
            "destination resource has no status subresource (set syncStatus: false or add one)",
        )
        return
    run.s.record(run.destination_endpoint, updated)
