"""The sync algorithm of docs/architecture.md §12 for any rule: one source object and its copy on the target.

Level-triggered and idempotent: every run reads the current state of both sides; the event that
caused it is never trusted, except that a first sync may start from the event's object because its
first write is conditional on exactly that version (``_first_sight``). A copy is deleted only when a
direct GET of the source object says it is gone (a NotFound that names the object, not one for a
resource that is not served) or being deleted — never because of a list, a relist, a stale cache or
an unreachable endpoint. A target object that is the copy of another source object is never adopted,
changed or deleted.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from kubernetes.client.exceptions import ApiException

from syncflow.api.conditions import now
from syncflow.kube import echoes, snapshots
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import LOGICAL_CLUSTER
from syncflow.kube.refs import ObjectRef
from syncflow.metrics import record as metrics
from syncflow.mutation.base import MutationError
from syncflow.queue import gone
from syncflow.queue.errors import PermanentError, RequeueAfter
from syncflow.queue.keys import ObjectKey
from syncflow.sync import desired as desired_mod
from syncflow.sync import filters, ownership, placement, state, transforms
from syncflow.sync import metadata as md
from syncflow.sync.changes import filters_copy_changes
from syncflow.sync.endpoints import Endpoints
from syncflow.sync.events import record_event
from syncflow.sync.keys import RELATED, STATUS, SYNC, key_for, owner_ref, source_ref
from syncflow.sync.merge import three_way_patch
from syncflow.sync.namespaces import create_in
from syncflow.sync.ownership import Owner, Reach, RefusedError
from syncflow.sync.rule import IdentityPlacement, SyncRule
from syncflow.templating import TemplateError
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.sync")

Obj = dict[str, Any]
WAIT_FOR_DELETION = 1.0
ORPHANED_ANNOTATION = "syncflow.kcp.io/orphaned"
SOURCE_VERSION_ANNOTATION = "syncflow.kcp.io/source-resource-version"
"""On copies of polled sources: the source's resourceVersion the copy was written from (the poll's
staleness guard: an object is only written again when that version changed)."""


@dataclass(frozen=True)
class Sync:
    """One rule at work and its endpoints. A run adds finalizers only while it holds its key's lease,
    whose claim found the rule ready: a release waits for such runs (``RuleWorker.release``).

    ``release_related`` runs when a source object is being deleted and its copy still exists, before
    the copy is deleted: it cleans up the related objects and raises ``RequeueAfter`` while it waits.
    ``reach`` says which system namespaces the deployment opened (``syncflow.sync.ownership``).
    """

    rule: SyncRule
    endpoints: Endpoints
    release_related: Callable[[Sync, ObjectKey, Obj, Obj], None] | None = None
    reach: Reach = field(default_factory=Reach)

    def source(self, key: ObjectKey) -> JsonApi:
        """The source endpoint, at the key's logical cluster."""
        return self.endpoints.api(self.rule.source.endpoint, self.rule.source.cluster or key.cluster)

    @property
    def target(self) -> JsonApi:
        """The target endpoint."""
        return self.endpoints.api(self.rule.target.endpoint, self.rule.target.cluster or "")

    def source_path(self, key: ObjectKey) -> str:
        """The source object's path."""
        return self.rule.source.resource.path(key.namespace, key.name)

    def target_path(self, obj: Obj) -> str:
        """The path of a target object."""
        meta = _meta(obj)
        return self.rule.target.resource.path(meta.get("namespace", ""), meta["name"])

    def protects(self, obj: Obj) -> bool:
        """Whether target object ``obj`` is a system object no sync may write or delete."""
        meta = _meta(obj)
        return self.reach.protects(self.rule.target.resource, meta.get("namespace", ""), meta["name"])

    def record(self, endpoint: str, obj: Obj) -> None:
        """Remember a write's resourceVersion so its watch echo is not enqueued again."""
        echoes.record(endpoint, ObjectRef.of(obj), _meta(obj).get("resourceVersion", ""))

    def synced(self, direction: metrics.Direction) -> None:
        """Count one write that synced an object, and its latency; every write of an upsync rule
        (status ``carry``) but a deletion counts as ``upsync``."""
        upsync = self.rule.status == "carry" and direction != "delete"
        kind: metrics.Direction = "upsync" if upsync else direction
        metrics.wrote(self.rule.source.resource.group_resource, kind)
        metrics.sync_latency(self.rule.name, kind)


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


def served_items(api: JsonApi, path: str, **query: str) -> list[Obj]:
    """The items of a LIST; none when the resource is not served (any more): its objects went with it."""
    try:
        return list(api.get(path, **query).get("items") or [])
    except ApiException as exc:
        if exc.status == 404 and not object_not_found(exc):
            return []
        raise


def _meta(obj: Obj) -> Obj:
    meta: Obj = obj["metadata"]
    return meta


def find_copy(s: Sync, key: ObjectKey) -> Obj | None:
    """The copy of a source object on the target, found by its sync labels (a LIST: the way to find it
    under any name; :func:`copy_at` finds it where the naming rule puts it)."""
    selector = desired_mod.copy_selector(key.cluster, key.namespace, key.name)
    found = s.target.get(s.rule.target.resource.path(), labelSelector=selector, limit="2").get("items") or []
    if len(found) > 1:
        names = ", ".join(f"{_meta(i).get('namespace', '')}/{_meta(i)['name']}" for i in found)
        raise PermanentError(f"several target objects claim to be the copy of {key}: {names}")
    return found[0] if found else None


def copy_at(s: Sync, key: ObjectKey, location: placement.Location, made: bool = True) -> Obj | None:
    """The copy of ``key``, read where the naming rule places it (one GET). The label-selector LIST of
    :func:`find_copy` only when the object there is not this key's copy, or when it is missing and a copy
    may exist under another name (``made``: the state says one was made; always so for a rule that keeps
    no state), e.g. after the naming rule changed; never for a rule that places copies under the
    source's own name. ``made=False`` trusts the state: no copy, no request
    (a copy of that name found by the create's 409 is still recognised)."""
    if not made and s.rule.state_namespace is not None:
        return None
    found = get_or_none(s.target, s.rule.target.resource.path(location.namespace, location.name))
    if found is not None and desired_mod.is_copy_of(found, key.cluster, key.namespace, key.name):
        return found
    return None if _placed_only_there(s.rule) else find_copy(s, key)


def _placed_only_there(rule: SyncRule) -> bool:
    """Whether a copy can be nowhere but where the rule places it now: the source's own namespace and
    name, never renamed (so no earlier naming can have put it elsewhere)."""
    return isinstance(rule.placement, IdentityPlacement) and not rule.placement.names


def set_finalizers(api: JsonApi, path: str, obj: Obj, finalizers: list[str]) -> Obj:
    """Write an object's finalizers (conditional on its resourceVersion: a race retries)."""
    patch = {"metadata": {"finalizers": finalizers or None, "resourceVersion": _meta(obj)["resourceVersion"]}}
    return api.merge_patch(path, patch)


def _set_finalizers(s: Sync, key: ObjectKey, obj: Obj, finalizers: list[str]) -> Obj:
    """Write the source object's finalizers."""
    updated = set_finalizers(s.source(key), s.source_path(key), obj, finalizers)
    s.record(s.rule.source.endpoint, updated)
    return updated


def release_finalizer(s: Sync, key: ObjectKey, obj: Obj) -> None:
    """Remove the rule's finalizers (current and previous) from a source object (no-op if absent)."""
    if s.rule.holds(obj):
        finalizers = _meta(obj).get("finalizers") or []
        _set_finalizers(s, key, obj, [f for f in finalizers if f not in s.rule.finalizers])
        log_event(logger, "sync.finalizer_released", key=str(key))


def _ensure_finalizer(s: Sync, key: ObjectKey, obj: Obj) -> Obj:
    """Hold the rule's finalizer on a source object, in place of a previous one it may still hold."""
    finalizers = _meta(obj).get("finalizers") or []
    if s.rule.finalizer is None:
        return obj
    wanted = [f for f in finalizers if f not in s.rule.previous_finalizers]
    if s.rule.finalizer not in wanted:
        wanted.append(s.rule.finalizer)
    return obj if wanted == finalizers else _set_finalizers(s, key, obj, wanted)


def delete_exactly(api: JsonApi, path: str, obj: Obj) -> bool:
    """Delete this very object, never one that replaced it meanwhile (gone already is fine); True if
    this call deleted it."""
    try:
        api.delete(path, {"preconditions": {"uid": _meta(obj)["uid"]}})
    except ApiException as exc:
        if exc.status not in (404, 409):
            raise
        return False
    return True


def _deletable(s: Sync, key: ObjectKey, copy: Obj | None) -> Obj | None:
    """``copy``, unless it is a system object, which is left as it is (then None: no copy to remove)."""
    if copy is not None and s.protects(copy):
        log_event(logger, "sync.copy_out_of_reach", key=str(key), target=s.target_path(copy))
        return None
    return copy


def _delete_copy(s: Sync, key: ObjectKey, copy: Obj) -> None:
    if _meta(copy).get("deletionTimestamp"):
        return
    if delete_exactly(s.target, s.target_path(copy), copy):
        s.synced("delete")
    log_event(logger, "sync.copy_deleted", key=str(key), target=s.target_path(copy))


def _kept(s: Sync, copy: Obj, obj: Obj | None = None) -> bool:
    """Whether the rule keeps ``copy`` whatever its policies say: the copy is marked so, or the rule's
    ``keep`` selects ``obj``, its source object, when it is at hand."""
    if s.rule.keep is None:
        return False
    marked = (_meta(copy).get("annotations") or {}).get(md.KEEP_ANNOTATION) == "true"
    return marked or (obj is not None and filters.keeps(s.rule, obj))


def _orphan_copy(s: Sync, key: ObjectKey, copy: Obj) -> None:
    """Leave the copy (deletion is not propagated) and mark it as orphaned."""
    if (_meta(copy).get("annotations") or {}).get(ORPHANED_ANNOTATION) != "true" and not s.protects(copy):
        patch = {"metadata": {"annotations": {ORPHANED_ANNOTATION: "true"}}}
        s.record(s.rule.target.endpoint, s.target.merge_patch(s.target_path(copy), patch))
        log_event(logger, "sync.copy_orphaned", key=str(key), target=s.target_path(copy))


def state_path(s: Sync, key: ObjectKey) -> str | None:
    """The path of the state Secret of source object ``key`` (None: the rule keeps no state)."""
    if s.rule.state_namespace is None:
        return None
    resource = s.rule.source.resource
    name = state.state_secret_name(key.cluster, resource.api_version, resource.kind, key.namespace, key.name)
    return f"/api/v1/namespaces/{s.rule.state_namespace}/secrets/{name}"


def _drop_state(s: Sync, key: ObjectKey) -> None:
    path = state_path(s, key)
    if path is None:
        return
    try:
        s.target.delete(path)
    except ApiException as exc:
        if exc.status != 404:
            raise


def _source_gone(s: Sync, key: ObjectKey, copy: Obj | None) -> None:
    """The source object is confirmed gone: remove (or orphan) what we made for it; its keys then name
    nothing any more (``gone.mark``)."""
    if copy is not None:
        if s.rule.deletion == "orphan" or _kept(s, copy):
            _orphan_copy(s, key, copy)
        else:
            _delete_copy(s, key, copy)
    _drop_state(s, key)
    gone.mark(*_other_keys(s, key))


def _other_keys(s: Sync, key: ObjectKey) -> list[str]:
    """The other keys of the object ``key`` names (its status and related keys), which end with it."""
    verbs = [STATUS, RELATED] if s.rule.related else [STATUS]
    return [str(ObjectKey(verb, key.rule, key.cluster, key.namespace, key.name)) for verb in verbs]


def sync_object(s: Sync, key: ObjectKey) -> None:
    """Make the copy of ``key`` match its source object (or clean up after it)."""
    obj = _first_sight(s, key)
    if obj is None:
        obj = get_or_none(s.source(key), s.source_path(key))
        if obj is None:  # confirmed gone by a direct GET
            _source_gone(s, key, _deletable(s, key, find_copy(s, key)))
            return
        if _meta(obj).get("deletionTimestamp"):
            _finish_deletion(s, key, obj, _deletable(s, key, find_copy(s, key)))
            return
        if not selected(s, key, obj):
            copy = _deletable(s, key, find_copy(s, key)) if s.rule.unmatched == "delete" else None
            _stop_syncing(s, key, obj, copy)
            return
        if not s.rule.spec:
            return
    first = _first_sync(s, obj)
    obj = _ensure_finalizer(s, key, obj)
    copy = _apply_spec(s, key, obj, first)
    if copy is None:
        return
    if s.rule.status == "return":
        return_status(s, key, obj=obj, copy=copy)
    elif s.rule.status == "carry":
        _carry_status(s, key, obj, copy)


def _first_sync(s: Sync, obj: Obj) -> bool:
    """Whether the source object was never synced as far as it shows: the rule sets a finalizer and the
    object does not carry it (yet)."""
    finalizer = s.rule.finalizer
    return finalizer is not None and finalizer not in (_meta(obj).get("finalizers") or [])


def _first_sight(s: Sync, key: ObjectKey) -> Obj | None:
    """The source object as its watch event (or its poll) delivered it (``syncflow.kube.snapshots``),
    when that is all a sync needs: a selected, live object's first sync, or any sync of a polled source.
    A first sync writes its finalizer next, conditional on the snapshot's resourceVersion, so a stale
    snapshot fails there (409, retried with a read) before anything is made from it. The copy of a
    polled source records the version it was made from, so the next poll finds a stale one and syncs
    it again. None: read the object."""
    snapshot = snapshots.current()
    if snapshot is None or snapshot.side != s.rule.source.endpoint or not s.rule.spec:
        return None
    obj = snapshot.obj
    if source_ref(s.rule, ObjectRef.of(obj)) != ObjectRef(key.cluster, key.namespace, key.name):
        return None
    if _meta(obj).get("deletionTimestamp") or not selected(s, key, obj):
        return None
    return obj if _first_sync(s, obj) or not s.rule.watch_source else None


def _listed_uncopied(s: Sync, key: ObjectKey) -> bool:
    """Whether the run's snapshot is the source object from a poll that listed the rule's copies (by
    their labels, so under any name) and found none of it: the copy is created without reading it
    first. One made since the listing is still recognised by the create's 409."""
    snapshot = snapshots.current()
    return (
        snapshot is not None
        and snapshot.uncopied
        and snapshot.side == s.rule.source.endpoint
        and source_ref(s.rule, ObjectRef.of(snapshot.obj)) == ObjectRef(key.cluster, key.namespace, key.name)
    )


def selected(s: Sync, key: ObjectKey, obj: Obj) -> bool:
    """Whether the rule's selector selects source object ``obj`` (reads its Namespace when needed),
    never what :func:`filters.never_synced` names (e.g. an upsynced copy, ``kube-root-ca.crt``)."""
    if filters.never_synced(s.rule, obj):
        return False
    namespace_obj = None
    if filters.needs_namespace(s.rule.selector, obj):
        namespace_obj = get_or_none(s.source(key), f"/api/v1/namespaces/{key.namespace}")
    return filters.matches(s.rule.selector, obj, namespace_obj)


def workspace_path_of(s: Sync, key: ObjectKey) -> str | None:
    """The source object's workspace path, when the rule records it."""
    if not s.rule.workspace_paths:
        return None
    logical_cluster = s.source(key).get(LOGICAL_CLUSTER)
    return str((_meta(logical_cluster).get("annotations") or {}).get("kcp.io/path") or key.cluster)


def _locate(s: Sync, key: ObjectKey, obj: Obj, workspace_path: str | None) -> placement.Location:
    try:
        return placement.locate(
            s.rule.placement,
            obj,
            key.cluster,
            workspace_path or key.cluster,
            target_namespaced=s.rule.target.resource.namespaced,
        )
    except TemplateError as exc:  # a rendered name that can never be valid: retrying cannot help
        raise PermanentError(f"cannot place the copy of {key}: {exc}") from exc


def _apply_spec(s: Sync, key: ObjectKey, obj: Obj, first: bool = False) -> Obj | None:
    """Create, adopt or three-way-merge the copy; keep the last-applied state. None: the target object
    of that name is not ours and the rule never adopts.

    A ``first`` sync (see ``_first_sync``) creates the state Secret before the copy instead of reading
    it: a 201 says no copy was ever recorded (what a 404 on reading it says), so neither is read; a
    409 means there is state after all, and the sync reads it and goes on as any other."""
    rule = s.rule
    workspace_path = workspace_path_of(s, key)
    location = _locate(s, key, obj, workspace_path)
    if s.reach.protects(rule.target.resource, location.namespace, location.name):
        _refuse(
            s, key, obj, ownership.protected(rule.target.resource.kind, location.namespace, location.name)
        )
    secret_path = state_path(s, key)
    # api-syncagent leaves the workspace path empty; a rule that keeps no state needs no key
    entry = state.state_key(key.cluster, "", key.namespace, key.name) if secret_path is not None else ""
    copy: Obj | None = None
    secret: Obj | None = None
    saved = False
    if first and secret_path is not None:
        wanted, content = _desired(s, key, obj, None, location, workspace_path)
        saved = create_state(s, key, {entry: content}) is not None
    if not saved:
        secret = get_or_none(s.target, secret_path) if secret_path else None
        copy = None if _listed_uncopied(s, key) else copy_at(s, key, location, made=secret is not None)
        wanted, content = _desired(s, key, obj, copy, location, workspace_path)
    last = state.read_state(secret, entry)
    made = False
    if copy is None:
        try:
            adopted = _create_or_adopt(s, key, obj, wanted, location, last)
        except PermanentError:
            if saved:  # no copy of ours: the state just written must not say otherwise
                _drop_state(s, key)
            raise
        if adopted is None:
            if saved:
                _drop_state(s, key)
            return None
        copy, last, made = adopted
    if _meta(copy).get("deletionTimestamp"):
        raise RequeueAfter(WAIT_FOR_DELETION)  # the old copy is still going away
    # a copy just created from ``wanted`` has it all: only the server's defaults differ, which a
    # patch must not overwrite
    patch = None if made else three_way_patch(last, wanted, copy, revert=rule.drift == "revert")
    if patch is not None:
        _stamp(s, patch)
        copy = s.target.merge_patch(s.target_path(copy), patch)
        s.record(rule.target.endpoint, copy)
        s.synced("spec")
        log_event(
            logger, "sync.updated", key=str(key), target=s.target_path(copy), fields=",".join(sorted(patch))
        )
    if secret_path is not None and not saved and last != content:
        save_state(s, key, secret_path, secret, {entry: content})
    return copy


def _desired(
    s: Sync,
    key: ObjectKey,
    obj: Obj,
    copy: Obj | None,
    location: placement.Location,
    workspace_path: str | None,
) -> tuple[Obj, Obj]:
    """The copy wanted for source object ``obj`` and the state recorded for it (api-syncagent's: the
    source object, stripped)."""
    rule = s.rule
    source = _transformed(s, key, obj, copy if copy is not None else _preview(s, obj, location))
    wanted = desired_mod.build_desired(
        source,
        local_api_version=rule.target.resource.api_version,
        local_kind=rule.target.resource.kind,
        local_namespace=location.namespace,
        local_name=location.name,
        cluster=key.cluster,
        workspace_path=workspace_path,
        agent=rule.agent,
        keep_status=rule.status == "carry" and not rule.target.resource.status_subresource,
    )
    if not rule.watch_source:  # a polled source: the copy records which version of it it holds
        wanted["metadata"]["annotations"][SOURCE_VERSION_ANNOTATION] = _meta(obj).get("resourceVersion", "")
    return wanted, desired_mod.managed_content(source)


def _preview(s: Sync, obj: Obj, location: placement.Location) -> Obj:
    """The copy-to-be of ``obj``, which spec mutations may read before the copy exists."""
    resource = s.rule.target.resource
    return desired_mod.preview(
        obj,
        api_version=resource.api_version,
        kind=resource.kind,
        namespace=location.namespace,
        name=location.name,
    )


def _mutation_failed(s: Sync, key: ObjectKey, obj: Obj, exc: MutationError) -> PermanentError:
    """A mutation that fails parks the key (retrying gives the same result) and tells the user in kcp."""
    record_event(s.source(key), obj, "MutationFailed", str(exc))
    return PermanentError(f"cannot mutate {key}: {exc}")


def _transformed(s: Sync, key: ObjectKey, obj: Obj, other: Obj) -> Obj:
    """The source object after the rule's transforms; ``other``: the copy, or a preview of it."""
    try:
        return transforms.of_rule(s.rule, obj, other)
    except MutationError as exc:
        raise _mutation_failed(s, key, obj, exc) from exc


def _stamp(s: Sync, obj: Obj) -> None:
    """Set the rule's write-time annotation (only on writes, so it never causes one)."""
    annotation = transforms.timestamp_annotation(s.rule.transforms)
    if annotation:
        obj.setdefault("metadata", {}).setdefault("annotations", {})[annotation] = now()


def _refuse(s: Sync, key: ObjectKey, obj: Obj, refusal: RefusedError) -> NoReturn:
    """Tell the source object's owner why it is not synced (an Event beside it), then park the key."""
    record_event(s.source(key), obj, refusal.event_reason, refusal.event_message)
    log_event(logger, "sync.refused", level=logging.WARNING, key=str(key), cause=refusal.cause)
    raise refusal


def _create_or_adopt(
    s: Sync, key: ObjectKey, obj: Obj, wanted: Obj, location: placement.Location, last: Obj | None
) -> tuple[Obj, Obj | None, bool] | None:
    """The copy (created, ours already, or adopted), the last-applied state to merge from, and whether
    the copy was just created; None: a foreign object the rule never adopts."""
    rule = s.rule
    body = {**wanted, "metadata": dict(wanted["metadata"])}
    _stamp(s, body)
    namespace = location.namespace if rule.target.resource.namespaced else ""
    try:
        created = create_in(
            s.target,
            rule.target.resource.path(location.namespace),
            namespace,
            body,
            location.namespace_object,
            labels={md.AGENT_LABEL: rule.agent},
        )
    except ApiException as exc:
        if exc.status != 409:
            raise
    else:
        s.record(rule.target.endpoint, created)
        s.synced("spec")
        log_event(logger, "sync.created", key=str(key), target=s.target_path(created))
        return created, last, True
    existing = s.target.get(rule.target.resource.path(location.namespace, location.name))
    if _meta(existing).get("deletionTimestamp"):
        raise RequeueAfter(WAIT_FOR_DELETION)
    kind = rule.target.resource.kind
    owner = ownership.owner_of(existing, rule.agent, key.cluster, key.namespace, key.name)
    if owner == Owner.THIS_COPY:
        return existing, last, False  # ours, which the state did not record (a crash between the writes)
    if owner == Owner.OTHER_COPY:
        other = owner_ref(existing)
        named = f"{other.cluster}/{other.namespace}/{other.name}" if other else "an object of another agent"
        _refuse(s, key, obj, ownership.collision(kind, location.namespace, location.name, named))
    if owner == Owner.FOREIGN and rule.adopt == "never":
        log_event(logger, "sync.exists_not_ours", key=str(key), target=s.target_path(existing))
        return None
    if owner == Owner.FOREIGN and (rule.adopt == "refuse" or not rule.target.resource.namespaced):
        _refuse(s, key, obj, ownership.foreign(kind, location.namespace, location.name))
    log_event(logger, "sync.adopting", key=str(key), target=s.target_path(existing), owner=owner.value)
    # no last-applied state for an adopted object: merge, so fields only set on the target survive
    return existing, {}, False


def _state_secret(s: Sync, key: ObjectKey, entries: dict[str, Obj]) -> Obj:
    rule = s.rule
    assert rule.state_namespace is not None
    resource = rule.source.resource
    return state.state_secret(
        rule.state_namespace,
        key.cluster,
        resource.api_version,
        resource.kind,
        key.namespace,
        key.name,
        entries,
    )


def create_state(s: Sync, key: ObjectKey, entries: dict[str, Obj]) -> Obj | None:
    """Create the state Secret of source object ``key`` with ``entries``; None if it exists."""
    try:
        return s.target.create(
            f"/api/v1/namespaces/{s.rule.state_namespace}/secrets", _state_secret(s, key, entries)
        )
    except ApiException as exc:
        if exc.status != 409:
            raise
        return None


def save_state(s: Sync, key: ObjectKey, path: str, secret: Obj | None, entries: dict[str, Obj]) -> None:
    """Write ``entries`` (state key → content) into the state Secret of source object ``key`` (read as
    ``secret``), keeping its other entries; a concurrent change of the Secret is a conflict (retried)."""
    if secret is None:
        if create_state(s, key, entries) is not None:
            return
        secret = s.target.get(path)
    wanted = _state_secret(s, key, entries)
    data = {**(secret.get("data") or {}), **(wanted.get("data") or {})}
    s.target.replace(
        path,
        {
            **wanted,
            "data": data,
            "metadata": {**wanted["metadata"], "resourceVersion": _meta(secret)["resourceVersion"]},
        },
    )


def _finish_deletion(s: Sync, key: ObjectKey, obj: Obj, copy: Obj | None) -> None:
    """Source object deleting: clean up its related objects, delete (or orphan) the copy, wait until it
    is gone, drop the state, release the finalizer."""
    if copy is not None and s.release_related is not None:
        s.release_related(s, key, obj, copy)
    if copy is not None and s.rule.deletion == "propagate" and not _kept(s, copy, obj):
        _delete_copy(s, key, copy)
        raise RequeueAfter(WAIT_FOR_DELETION)
    if copy is not None:
        _orphan_copy(s, key, copy)
    _drop_state(s, key)
    release_finalizer(s, key, obj)
    gone.mark(*_other_keys(s, key))  # syncflow is done with it: the object goes once others are


def _stop_syncing(s: Sync, key: ObjectKey, obj: Obj, copy: Obj | None) -> None:
    """The object no longer matches the selector: release it; keep the copy unless the rule deletes
    (and does not keep this object's copy). Its keys then name nothing syncflow syncs."""
    if copy is not None and s.rule.unmatched == "delete" and not _kept(s, copy, obj):
        _delete_copy(s, key, copy)
        _drop_state(s, key)
    release_finalizer(s, key, obj)
    gone.mark(*_other_keys(s, key))


def _returns_status(rule: SyncRule) -> bool:
    return rule.status == "return" and rule.source.resource.status_subresource


def may_return_status(rule: SyncRule, copy: Obj) -> bool:
    """Whether :func:`return_status` may have something to return for this version of a copy: the rule
    returns status, and the copy has one (or status mutations may give it one). A copy without status —
    e.g. the echo of our own create — needs no status run."""
    return _returns_status(rule) and ("status" in copy or transforms.mutates_status(rule.transforms))


def return_status(s: Sync, key: ObjectKey, *, obj: Obj | None = None, copy: Obj | None = None) -> None:
    """Copy the copy's status (after the rule's status mutations) to the source object's ``/status``
    when they differ."""
    if not _returns_status(s.rule):
        return
    if obj is None and copy is None and s.rule.status_for is None and filters_copy_changes(s.rule):
        delivered = _delivered_copy(s, key)
        if delivered is not None:
            _replace_status(s, key, delivered)
            return
    source = s.source(key)
    obj = obj if obj is not None else get_or_none(source, s.source_path(key))
    if obj is None:
        gone.mark()
        return
    if _meta(obj).get("deletionTimestamp") or not filters.returns_status(s.rule, obj):
        return
    copy = copy if copy is not None else _copy_of_existing(s, key, obj)
    if copy is None or not may_return_status(s.rule, copy):
        return
    try:
        copy = transforms.mutate_status(s.rule.transforms, copy, _transformed(s, key, obj, copy))
    except MutationError as exc:
        raise _mutation_failed(s, key, obj, exc) from exc
    if "status" not in copy or copy["status"] == obj.get("status"):
        return
    updated = source.replace(f"{s.source_path(key)}/status", {**obj, "status": copy["status"]})
    s.record(s.rule.source.endpoint, updated)
    s.synced("status")
    log_event(logger, "sync.status_returned", key=str(key))


def _replace_status(s: Sync, key: ObjectKey, copy: Obj) -> None:
    """The status run of a copy's event: its status replaces the source's, which is not read. The
    target watch queues such a run only when the copy's status changed (``syncflow.sync.eventkeys``),
    and the copy is the side whose status wins; a newer copy is a newer event that runs again."""
    if "status" not in copy:
        return
    operations = [{"op": "add", "path": "/status", "value": copy["status"]}]
    try:
        updated = s.source(key).json_patch(f"{s.source_path(key)}/status", operations)
    except ApiException as exc:
        if object_not_found(exc):
            gone.mark()
            return  # the source is gone: its sync deletes the copy
        raise
    s.record(s.rule.source.endpoint, updated)
    s.synced("status")
    log_event(logger, "sync.status_returned", key=str(key))


def _delivered_copy(s: Sync, key: ObjectKey) -> Obj | None:
    """The copy of ``key`` as the target watch event that queued this status run carried it
    (``syncflow.kube.snapshots``), if that is what was delivered."""
    snapshot = snapshots.current()
    if snapshot is None or snapshot.side != s.rule.target.endpoint:
        return None
    if owner_ref(snapshot.obj) != ObjectRef(key.cluster, key.namespace, key.name):
        return None
    return None if _meta(snapshot.obj).get("deletionTimestamp") else snapshot.obj


def _copy_of_existing(s: Sync, key: ObjectKey, obj: Obj) -> Obj | None:
    """The copy of source object ``obj``, read where the naming rule places it (the LIST when its name
    cannot be rendered)."""
    try:
        location = _locate(s, key, obj, workspace_path_of(s, key))
    except PermanentError:
        return find_copy(s, key)
    return copy_at(s, key, location)


def _carry_status(s: Sync, key: ObjectKey, obj: Obj, copy: Obj) -> None:
    """Upsync: the source's status goes to the copy's ``/status`` (the copy has a status subresource)."""
    if not s.rule.target.resource.status_subresource or obj.get("status") == copy.get("status"):
        return
    if "status" not in obj:
        return
    updated = s.target.replace(f"{s.target_path(copy)}/status", {**copy, "status": obj["status"]})
    s.record(s.rule.target.endpoint, updated)
    s.synced("status")
    log_event(logger, "sync.status_carried", key=str(key))


def release_all(s: Sync, everywhere: JsonApi, key_of: Callable[[ObjectRef], ObjectKey]) -> int:
    """Release the rule's finalizers on every source object (the rule stopped syncing)."""
    released = 0
    for obj in served_items(everywhere, s.rule.source.resource.path()):
        if not s.rule.holds(obj):
            continue
        release_finalizer(s, key_of(ObjectRef.of(obj)), obj)
        released += 1
    return released


def release_unselected(s: Sync, everywhere: JsonApi) -> int:
    """Stop syncing every live source object that holds the rule's finalizer but is no longer selected
    (its copy deleted when the rule deletes unmatched copies); returns how many."""
    stopped = 0
    for obj in served_items(everywhere, s.rule.source.resource.path()):
        if not s.rule.holds(obj) or _meta(obj).get("deletionTimestamp"):
            continue
        key = key_for(SYNC, s.rule, ObjectRef.of(obj))
        if selected(s, key, obj):
            continue
        copy = _deletable(s, key, find_copy(s, key)) if s.rule.unmatched == "delete" else None
        _stop_syncing(s, key, obj, copy)
        stopped += 1
    return stopped


def remove_copies(s: Sync) -> int:
    """Delete every copy the rule's agent made on the target, and their last-applied state (the target
    is given up; each copy's source object keeps its content); a copy the rule keeps stays."""
    copies = served_items(
        s.target, s.rule.target.resource.path(), labelSelector=f"{md.AGENT_LABEL}={s.rule.agent}"
    )
    removed = 0
    for copy in copies:
        owner = owner_ref(copy)
        if owner is None or (s.rule.source.cluster and owner.cluster != s.rule.source.cluster):
            continue  # not a copy, or one of another workspace
        if s.protects(copy) or _kept(s, copy):
            continue  # a system object is never deleted, a kept copy stays
        key = key_for(SYNC, s.rule, owner)
        _delete_copy(s, key, copy)
        _drop_state(s, key)
        removed += 1
    return removed
