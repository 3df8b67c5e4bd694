"""The sync algorithm of DESIGN §5: one kcp object and its local copy, level-triggered and idempotent.

Every run reads the current state of both sides; the event that caused it is never trusted. A
local copy is deleted only when a direct GET of the kcp object says it is gone (a NotFound that
names the object, not one for a resource that is not served) or being deleted — never because of a
list, a relist, a stale cache or an unreachable kcp.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.keys import ObjectKey
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.refs import ObjectRef
from syncflow.logs import log_event
from syncflow.queue.errors import PermanentError, RequeueAfter
from syncflow.sync import desired as desired_mod
from syncflow.sync import state
from syncflow.sync.echoes import OwnWrites
from syncflow.sync.filters import matches_filter
from syncflow.sync.merge import three_way_patch
from syncflow.sync.metadata import CLEANUP_FINALIZER
from syncflow.sync.rule import Resource, SyncRule

logger = logging.getLogger("syncflow.sync")

Obj = dict[str, Any]
LOGICAL_CLUSTER = "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster"
WAIT_FOR_DELETION = 1.0


@dataclass(frozen=True)
class Sides:
    """The two endpoints of one sync: kcp (per logical cluster) and the service cluster."""

    kcp: Callable[[str], JsonApi]
    service: JsonApi
    echoes: OwnWrites


def object_not_found(exc: ApiException) -> bool:
    """A 404 about the object itself (its Status names it), not about an unserved resource or path."""
    if exc.status != 404:
        return False
    try:
        body = json.loads(exc.body or "")
    except ValueError:
        return False
    return isinstance(body, dict) and bool((body.get("details") or {}).get("name"))


def get_or_none(api: JsonApi, path: str) -> Obj | None:
    """GET, with "this object does not exist" as None; any other 404 is an error."""
    try:
        return api.get(path)
    except ApiException as exc:
        if object_not_found(exc):
            return None
        raise


def _meta(obj: Obj) -> Obj:
    meta: Obj = obj["metadata"]
    return meta


def find_copy(rule: SyncRule, sides: Sides, key: ObjectKey) -> Obj | None:
    """The local copy of a kcp object, found by its sync labels."""
    selector = desired_mod.copy_selector(key.cluster, key.namespace, key.name)
    items = sides.service.get(rule.local.path(), labelSelector=selector, limit="2").get("items") or []
    if len(items) > 1:
        names = ", ".join(f"{_meta(i).get('namespace', '')}/{_meta(i)['name']}" for i in items)
        raise PermanentError(f"several local objects claim to be the copy of {key}: {names}")
    return items[0] if items else None


def _local_path(rule: SyncRule, obj: Obj) -> str:
    return rule.local.path(_meta(obj).get("namespace", ""), _meta(obj)["name"])


def _record(sides: Sides, side: str, key: ObjectKey, obj: Obj, cluster: str | None = None) -> None:
    meta = _meta(obj)
    ref = ObjectRef(cluster if cluster is not None else "", meta.get("namespace", ""), meta["name"])
    sides.echoes.record(side, ref, meta.get("resourceVersion", ""))


def _set_finalizers(sides: Sides, key: ObjectKey, path: str, remote: Obj, finalizers: list[str]) -> Obj:
    """Write the kcp object's finalizers (conditional on its resourceVersion: a race retries)."""
    meta = _meta(remote)
    patch = {"metadata": {"finalizers": finalizers or None, "resourceVersion": meta["resourceVersion"]}}
    updated = sides.kcp(key.cluster).merge_patch(path, patch)
    _record(sides, "kcp", key, updated, key.cluster)
    return updated


def release_finalizer(sides: Sides, key: ObjectKey, path: str, remote: Obj) -> None:
    """Remove our finalizer from a kcp object (no-op if absent)."""
    finalizers = _meta(remote).get("finalizers") or []
    if CLEANUP_FINALIZER in finalizers:
        _set_finalizers(sides, key, path, remote, [f for f in finalizers if f != CLEANUP_FINALIZER])
        log_event(logger, "sync.finalizer_released", key=str(key))


def _delete_local(rule: SyncRule, sides: Sides, key: ObjectKey, copy: Obj) -> None:
    if not _meta(copy).get("deletionTimestamp"):
        sides.service.delete(_local_path(rule, copy))
        log_event(logger, "sync.local_deleted", key=str(key), local=_local_path(rule, copy))


def _state_path(rule: SyncRule, key: ObjectKey) -> str:
    name = state.state_secret_name(
        key.cluster, rule.remote.api_version, rule.remote.kind, key.namespace, key.name
    )
    return f"/api/v1/namespaces/{rule.state_namespace}/secrets/{name}"


def _drop_state(rule: SyncRule, sides: Sides, key: ObjectKey) -> None:
    try:
        sides.service.delete(_state_path(rule, key))
    except ApiException as exc:
        if exc.status != 404:
            raise


def sync_object(rule: SyncRule, sides: Sides, key: ObjectKey) -> None:
    """Make the local copy of ``key`` match its kcp object (or clean up after it)."""
    kcp = sides.kcp(key.cluster)
    path = rule.remote.path(key.namespace, key.name)
    remote = get_or_none(kcp, path)
    copy = find_copy(rule, sides, key)
    if remote is None:  # confirmed gone by a direct GET: remove what we made for it
        if copy is not None:
            _delete_local(rule, sides, key, copy)
        _drop_state(rule, sides, key)
        return
    if _meta(remote).get("deletionTimestamp"):
        _finish_deletion(rule, sides, key, path, remote, copy)
        return
    namespace_obj = None
    if rule.filter and rule.filter.get("namespace") and key.namespace:
        namespace_obj = get_or_none(kcp, f"/api/v1/namespaces/{key.namespace}")
    if not matches_filter(rule.filter, remote, namespace_obj):
        _stop_syncing(rule, sides, key, path, remote, copy)
        return
    if CLEANUP_FINALIZER not in (_meta(remote).get("finalizers") or []):
        remote = _set_finalizers(
            sides, key, path, remote, [*(_meta(remote).get("finalizers") or []), CLEANUP_FINALIZER]
        )
    copy = _apply_spec(rule, sides, key, remote, copy)
    return_status(rule, sides, key, remote=remote, copy=copy)


def _workspace_path(rule: SyncRule, sides: Sides, key: ObjectKey) -> str | None:
    if not rule.workspace_paths:
        return None
    logical_cluster = sides.kcp(key.cluster).get(LOGICAL_CLUSTER)
    return str((_meta(logical_cluster).get("annotations") or {}).get("kcp.io/path") or key.cluster)


def _ensure_namespace(sides: Sides, namespace: str) -> None:
    if get_or_none(sides.service, f"/api/v1/namespaces/{namespace}") is None:
        try:
            sides.service.create("/api/v1/namespaces", {"metadata": {"name": namespace}})
        except ApiException as exc:
            if exc.status != 409:
                raise


def _apply_spec(rule: SyncRule, sides: Sides, key: ObjectKey, remote: Obj, copy: Obj | None) -> Obj:
    """Create, adopt or three-way-merge the local copy; keep the last-applied state."""
    workspace_path = _workspace_path(rule, sides, key)
    namespace, name = rule.naming.render(
        remote, key.cluster, workspace_path or key.cluster, local_namespaced=rule.local.namespaced
    )
    wanted = desired_mod.build_desired(
        remote,
        local_api_version=rule.local.api_version,
        local_kind=rule.local.kind,
        local_namespace=namespace,
        local_name=name,
        cluster=key.cluster,
        workspace_path=workspace_path,
        agent=rule.agent,
    )
    content = desired_mod.managed_content(remote)  # api-syncagent's state: the kcp object, stripped
    state_path = _state_path(rule, key)
    secret = get_or_none(sides.service, state_path)
    entry = state.state_key(key.cluster, "", key.namespace, key.name)  # api-syncagent leaves the path empty
    last = state.read_state(secret, entry)
    if copy is None:
        copy, last = _create_or_adopt(rule, sides, key, wanted, namespace, name, last)
    if _meta(copy).get("deletionTimestamp"):
        raise RequeueAfter(WAIT_FOR_DELETION)  # the old copy is still going away
    patch = three_way_patch(last, wanted, copy)
    if patch is not None:
        copy = sides.service.merge_patch(_local_path(rule, copy), patch)
        _record(sides, "local", key, copy)
        log_event(
            logger,
            "sync.updated",
            key=str(key),
            local=_local_path(rule, copy),
            fields=",".join(sorted(patch)),
        )
    if last != content:
        _save_state(rule, sides, key, state_path, secret, entry, content)
    return copy


def _create_or_adopt(
    rule: SyncRule, sides: Sides, key: ObjectKey, wanted: Obj, namespace: str, name: str, last: Obj | None
) -> tuple[Obj, Obj | None]:
    if rule.local.namespaced:
        _ensure_namespace(sides, namespace)
    try:
        created = sides.service.create(rule.local.path(namespace), wanted)
    except ApiException as exc:
        if exc.status != 409:
            raise
    else:
        _record(sides, "local", key, created)
        log_event(logger, "sync.created", key=str(key), local=_local_path(rule, created))
        return created, last
    existing = sides.service.get(rule.local.path(namespace, name))
    if _meta(existing).get("deletionTimestamp"):
        raise RequeueAfter(WAIT_FOR_DELETION)
    labels = _meta(wanted).get("labels") or {}
    annotations = _meta(wanted).get("annotations") or {}
    adopted = sides.service.merge_patch(
        rule.local.path(namespace, name), {"metadata": {"labels": labels, "annotations": annotations}}
    )
    _record(sides, "local", key, adopted)
    log_event(logger, "sync.adopted", key=str(key), local=_local_path(rule, adopted))
    return adopted, None  # no last-applied state for an adopted object: kcp's fields are applied in full


def _save_state(
    rule: SyncRule,
    sides: Sides,
    key: ObjectKey,
    path: str,
    secret: Obj | None,
    entry: str,
    content: Obj,
) -> None:
    wanted = state.state_secret(
        rule.state_namespace,
        key.cluster,
        rule.remote.api_version,
        rule.remote.kind,
        key.namespace,
        key.name,
        {entry: content},
    )
    if secret is None:
        try:
            sides.service.create(f"/api/v1/namespaces/{rule.state_namespace}/secrets", wanted)
            return
        except ApiException as exc:
            if exc.status != 409:
                raise
            secret = sides.service.get(path)
    data = {**(secret.get("data") or {}), **(wanted.get("data") or {})}
    sides.service.replace(
        path,
        {
            **wanted,
            "data": data,
            "metadata": {**wanted["metadata"], "resourceVersion": _meta(secret)["resourceVersion"]},
        },
    )


def _finish_deletion(
    rule: SyncRule, sides: Sides, key: ObjectKey, path: str, remote: Obj, copy: Obj | None
) -> None:
    """kcp object deleting: delete the copy, wait until it is gone, drop the state, release the finalizer."""
    if copy is not None:
        _delete_local(rule, sides, key, copy)
        raise RequeueAfter(WAIT_FOR_DELETION)
    _drop_state(rule, sides, key)
    release_finalizer(sides, key, path, remote)


def _stop_syncing(
    rule: SyncRule, sides: Sides, key: ObjectKey, path: str, remote: Obj, copy: Obj | None
) -> None:
    """The object no longer matches the filter: release it; keep the copy unless the policy deletes."""
    if copy is not None and rule.orphan_policy == "delete":
        _delete_local(rule, sides, key, copy)
        _drop_state(rule, sides, key)
    release_finalizer(sides, key, path, remote)


def return_status(
    rule: SyncRule, sides: Sides, key: ObjectKey, *, remote: Obj | None = None, copy: Obj | None = None
) -> None:
    """Copy the local copy's status to the kcp object's ``/status`` when they differ."""
    kcp = sides.kcp(key.cluster)
    path = rule.remote.path(key.namespace, key.name)
    remote = remote if remote is not None else get_or_none(kcp, path)
    if remote is None or _meta(remote).get("deletionTimestamp") or not rule.remote.status_subresource:
        return
    copy = copy if copy is not None else find_copy(rule, sides, key)
    if copy is None or "status" not in copy or copy["status"] == remote.get("status"):
        return
    updated = kcp.replace(f"{path}/status", {**remote, "status": copy["status"]})
    _record(sides, "kcp", key, updated, key.cluster)
    log_event(logger, "sync.status_returned", key=str(key))


def release_all(remote: Resource, rule_name: str, sides: Sides, everywhere: JsonApi) -> int:
    """Release our finalizer on every kcp object of ``remote`` (its rule stopped syncing)."""
    released = 0
    for obj in everywhere.get(remote.path()).get("items") or []:
        if CLEANUP_FINALIZER not in (_meta(obj).get("finalizers") or []):
            continue
        ref = ObjectRef.of(obj)
        key = ObjectKey("sync", rule_name, ref.cluster, ref.namespace, ref.name)
        release_finalizer(sides, key, remote.path(ref.namespace, ref.name), obj)
        released += 1
    return released
