"""The ``related`` key of one primary object, and the cleanup of its related objects when it goes.

A ``related`` run waits until the primary's copy exists and is up to date (its last-applied state
matches the source object), because related objects are found by reading the primary on both sides.
Then, per related resource in order: resolve the objects, record them in the related index, and sync
each one to its copy. For an origin on the rule's target side, the source primary is annotated with
``related-resources.syncagent.kcp.io/<identifier>.<index>`` naming each copy, as api-syncagent does.

Deletion is the ``sync`` key's: while the source object is being deleted and its copy still exists,
:func:`release_related` (the reconciler's ``release_related`` hook) deletes the copies that clean up
and releases kcp-side origin objects, before the primary's copy is deleted.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import resource_path
from syncflow.mutation.base import MutationError
from syncflow.queue import gone
from syncflow.queue.errors import PermanentError, RequeueAfter, TransientError, describe
from syncflow.queue.keys import ObjectKey
from syncflow.sync import state, transforms
from syncflow.sync.desired import managed_content
from syncflow.sync.keys import RELATED
from syncflow.sync.metadata import RELATED_RESOURCES_ANNOTATION_PREFIX
from syncflow.sync.reconciler import (
    WAIT_FOR_DELETION,
    Sync,
    find_copy,
    get_or_none,
    save_state,
    selected,
    set_finalizers,
    state_path,
    workspace_path_of,
)
from syncflow.sync.related.copies import RelatedRun, sync_copy
from syncflow.sync.related.index import EVERY, IndexedObject, RelatedIndex, object_id
from syncflow.sync.related.resolve import MAX_OBJECTS, Found, Primaries, Resolution, ResolveError, resolve
from syncflow.sync.rule import Related
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.sync")

Obj = dict[str, Any]


def _run(
    s: Sync, key: ObjectKey, related: Related, primary: Obj, secret: Obj | None, entries: dict[str, Obj]
) -> RelatedRun:
    rule = s.rule
    source = (s.source(key), rule.source.endpoint, key.cluster)
    target = (s.target, rule.target.endpoint, rule.target.cluster or "")
    origin, destination = (source, target) if related.origin == "source" else (target, source)
    return RelatedRun(
        s,
        key,
        related,
        primary,
        origin=origin[0],
        destination=destination[0],
        origin_endpoint=origin[1],
        destination_endpoint=destination[1],
        origin_cluster=origin[2],
        destination_cluster=destination[2],
        secret=secret,
        entries=entries,
    )


def _primaries(run: RelatedRun, copy: Obj, cluster_path: str) -> Primaries:
    rule = run.s.rule
    from_source = run.related.origin == "source"
    return Primaries(
        origin=run.primary if from_source else copy,
        destination=copy if from_source else run.primary,
        origin_side=rule.source.endpoint if from_source else rule.target.endpoint,
        destination_side=rule.target.endpoint if from_source else rule.source.endpoint,
        local=copy,
        remote=run.primary,
        cluster=run.key.cluster,
        cluster_path=cluster_path,
    )


def _resolve(run: RelatedRun, copy: Obj, cluster_path: str) -> Resolution:
    def lister(path: str, selector: str) -> list[Obj]:
        query = {"labelSelector": selector} if selector else {}
        items: list[Obj] = run.origin.get(path, limit=str(MAX_OBJECTS + 1), **query).get("items") or []
        return items

    return resolve(run.related, _primaries(run, copy, cluster_path), lister)


@contextlib.contextmanager
def _reported(run: RelatedRun) -> Iterator[None]:
    """Errors retrying cannot fix park the key, named after the related resource; a 403 names the
    permission claim a workspace may not have accepted."""
    what = f"related resource {run.related.identifier} of {run.key}"
    try:
        yield
    except (ResolveError, MutationError) as exc:
        raise PermanentError(f"{what}: {exc}") from exc
    except ApiException as exc:
        if exc.status != 403:
            raise
        resources = {
            run.related.origin_resource.group_resource,
            run.related.destination_resource.group_resource,
        }
        raise PermanentError(
            f"{what}: {describe(exc)} (if in a workspace: is the permission claim for "
            f"{' and '.join(sorted(resources))} accepted in its APIBinding?)"
        ) from exc


def _ids(run: RelatedRun, resolution: Resolution) -> Iterator[str]:
    """What the index records for one related resource: both sides of each object, and the origin
    namespaces a selector lists (a new object there may match)."""
    related = run.related
    origin = (run.origin_endpoint, related.origin_resource, run.origin_cluster)
    destination = (run.destination_endpoint, related.destination_resource, run.destination_cluster)
    for found in resolution.found:
        yield object_id(*origin, found.origin_namespace, found.origin_name)
        yield object_id(*destination, found.namespace, found.name)
    for namespace in resolution.selected_namespaces:
        yield object_id(*origin, namespace, EVERY)


def _copy_is_current(s: Sync, key: ObjectKey, obj: Obj, copy: Obj, secret: Obj | None) -> None:
    """Raise ``TransientError`` until the sync key has brought the copy in line with ``obj``."""
    if s.rule.state_namespace is None:
        return
    last = state.read_state(secret, state.state_key(key.cluster, "", key.namespace, key.name))
    try:
        current = managed_content(transforms.of_rule(s.rule, obj, copy))
    except MutationError as exc:
        raise PermanentError(f"cannot mutate {key}: {exc}") from exc
    if last is None or state.go_json(last) != state.go_json(current):
        raise TransientError(f"the copy of {key} is not up to date yet")


def _annotate(run: RelatedRun, found: list[Found]) -> None:
    """Name each copy on the source primary (api-syncagent's annotation; never removed)."""
    resource = run.related.origin_resource
    wanted: dict[str, str] = {}
    for index, item in enumerate(found):
        ref = {"namespace": item.namespace} if item.namespace else {}
        ref.update(name=item.name, apiVersion=resource.api_version, kind=resource.kind)
        annotation = f"{RELATED_RESOURCES_ANNOTATION_PREFIX}{run.related.identifier}.{index}"
        wanted[annotation] = state.go_json(ref, sort_keys=False)  # Go's struct field order
    annotations = run.primary["metadata"].get("annotations") or {}
    changed = {k: v for k, v in wanted.items() if annotations.get(k) != v}
    if changed:
        s, key = run.s, run.key
        updated = s.source(key).merge_patch(s.source_path(key), {"metadata": {"annotations": changed}})
        s.record(s.rule.source.endpoint, updated)


def sync_related(s: Sync, key: ObjectKey, index: RelatedIndex) -> None:
    """Sync every related object of source object ``key`` to its copy."""
    obj = get_or_none(s.source(key), s.source_path(key))
    if obj is None:
        index.forget(key)
        gone.mark()
        return
    if obj["metadata"].get("deletionTimestamp") or not s.rule.spec or not selected(s, key, obj):
        return
    copy = find_copy(s, key)
    if copy is None:
        raise TransientError(f"the copy of {key} does not exist yet")
    secret_path = state_path(s, key)
    secret = get_or_none(s.target, secret_path) if secret_path else None
    _copy_is_current(s, key, obj, copy, secret)
    cluster_path = workspace_path_of(s, key) or ""
    entries: dict[str, Obj] = {}
    runs = [_run(s, key, related, obj, secret, entries) for related in s.rule.related]
    resolved: list[Resolution] = []
    for run in runs:
        with _reported(run):
            resolved.append(_resolve(run, copy, cluster_path))
    index.record(
        key, [i for run, resolution in zip(runs, resolved, strict=True) for i in _ids(run, resolution)]
    )
    for run, resolution in zip(runs, resolved, strict=True):
        with _reported(run):
            for found in resolution.found:
                sync_copy(run, found, get_or_none(run.origin, run.origin_path(found)))
            if run.related.origin == "target" and resolution.found:
                _annotate(run, list(resolution.found))
    if entries and secret_path is not None:
        save_state(s, key, secret_path, secret, entries)
    log_event(logger, "related.synced", key=str(key), objects=sum(len(r.found) for r in resolved))


def release_rule(s: Sync, index: RelatedIndex) -> int:
    """The rule stopped syncing: remove its finalizer from every object on its source side that its
    primaries recorded (kcp-side origin objects), unless a primary of another rule records it too, and
    forget the rule's index entries. Returns how many objects were released."""
    rule, released = s.rule, 0
    for recorded in sorted(index.recorded_by_rule(rule.name)) if rule.finalizer else ():
        found = IndexedObject.parse(recorded)
        if found.endpoint != rule.source.endpoint or found.name == EVERY:
            continue
        if any(key.rule != rule.name for key in index.lookup([recorded])):
            continue
        api = s.endpoints.api(found.endpoint, found.cluster)
        path = resource_path(found.group, found.version, found.plural, found.namespace, found.name)
        obj = get_or_none(api, path)
        finalizers = (obj or {}).get("metadata", {}).get("finalizers") or []
        if obj is None or rule.finalizer not in finalizers:
            continue
        s.record(
            found.endpoint, set_finalizers(api, path, obj, [f for f in finalizers if f != rule.finalizer])
        )
        released += 1
    index.forget_rule(rule.name)
    return released


def release_related(index: RelatedIndex, s: Sync, key: ObjectKey, obj: Obj, copy: Obj) -> None:
    """The source object is being deleted: delete the copies of related resources that clean up and
    release their origin objects; ``RequeueAfter`` while copies are still going away. A related
    resource this agent may not access (403) is skipped with a warning."""
    cluster_path = workspace_path_of(s, key) or ""
    waiting = False
    for related in s.rule.related:
        run = _run(s, key, related, obj, None, {})
        with _reported(run):
            try:
                for found in _resolve(run, copy, cluster_path).found:
                    origin = get_or_none(run.origin, run.origin_path(found))
                    waiting = sync_copy(run, found, origin, primary_deleting=True) or waiting
            except ApiException as exc:
                if exc.status != 403:
                    raise
                # no access (a claim never accepted, or revoked): nothing can be cleaned up, and the
                # user's deletion must not hang on it
                log_event(
                    logger,
                    "related.cleanup_skipped",
                    level=logging.WARNING,
                    key=str(key),
                    identifier=related.identifier,
                    error=describe(exc),
                )
    if waiting:
        raise RequeueAfter(WAIT_FOR_DELETION)
    # ``key`` is the primary's sync key; the index records under its related key
    index.forget(ObjectKey(RELATED, key.rule, key.cluster, key.namespace, key.name))
