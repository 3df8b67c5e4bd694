"""Object semantics of kube-apiserver: create, read, update, patch and delete with their rules.

This layer knows uid, timestamps, generation, resourceVersion preconditions, the status
subresource, finalizers and deletionTimestamp. Lifecycle consequences (namespace termination,
CRDs that start or stop being served) live in :mod:`syncflow.devcluster.lifecycle`.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import random
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from syncflow.devcluster import dryrun, errors, kinds, limits, patch, schema, serverside
from syncflow.devcluster.errors import FieldError, StatusError
from syncflow.devcluster.managedfields import Tracking
from syncflow.devcluster.meta_validation import validate_object_meta
from syncflow.devcluster.resources import ResourceType
from syncflow.devcluster.store import Obj, Store
from syncflow.util.jsonvalues import deep_copy
from syncflow.util.selectors import FieldSelector, LabelSelector

# metadata fields only the server sets.
_SERVER_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


def now_rfc3339() -> str:
    """The current time as Kubernetes writes timestamps."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _content(obj: Obj) -> Obj:
    """An object without the fields that change on every write, for no-op detection."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "managedFields")}
    meta["managedFields"] = [  # a write that only moves an entry's time changes nothing
        {k: v for k, v in entry.items() if k != "time"}
        for entry in obj["metadata"].get("managedFields") or []
    ]
    return {**obj, "metadata": meta}


def _spec_part(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


Warnings = list[str]

Track = Callable[[Obj | None, Obj], list[Obj]]
"""Computes an object's managedFields after a write, from the object before (None: create) and after."""


@dataclass(frozen=True)
class Target:
    """The resource a request addresses, in one logical cluster, at one version."""

    cluster: str
    rtype: ResourceType
    version: str

    @property
    def api_version(self) -> str:
        """apiVersion of objects served at this version."""
        return self.rtype.api_version(self.version)


@dataclass(frozen=True)
class ListPage:
    """One page of a list: items, the list's resourceVersion, the continue token and how many objects
    the rest of the list holds (None when not told)."""

    items: list[tuple[str, Obj]]
    resource_version: int
    continue_token: str
    remaining: int | None


# Extra field selectors per resource, beyond metadata.name and metadata.namespace.
_FIELD_LABELS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "events"): (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    ("", "secrets"): ("type",),
    ("", "namespaces"): ("status.phase",),
    ("", "pods"): (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
}


def field_labels(rtype: ResourceType) -> tuple[str, ...]:
    """Field selector labels a resource supports."""
    return ("metadata.name", "metadata.namespace", *_FIELD_LABELS.get((rtype.group, rtype.plural), ()))


class Objects:
    """CRUD on the store with kube-apiserver's rules.

    Hooks: each ``admission(target, new, old)`` may adjust or refuse an object before it is
    validated and stored (``old`` is None on create, ``subresource`` writes skip admission);
    each ``on_write(target, new, old)`` runs after every stored change and ``on_remove(target, obj)``
    after an object is gone; :class:`~syncflow.devcluster.lifecycle.Lifecycle` hooks in there.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.dry = False  # True while a dry-run request is served
        self.field_validation = "Ignore"  # the fieldValidation of the request being served
        self.warnings: list[str] = []  # its warnings (unknown fields with Warn)
        self.admission: list[Callable[[Target, Obj, Obj | None], None]] = []
        self.on_write: list[Callable[[Target, Obj, Obj | None], None]] = []
        self.on_remove: list[Callable[[Target, Obj], None]] = []

    # ----- reads -----

    def get(self, t: Target, namespace: str, name: str) -> Obj:
        """One object or 404."""
        obj = self.store.get(t.cluster, t.rtype.group, t.rtype.plural, namespace, name)
        if obj is None:
            raise errors.not_found(t.rtype.plural, name, t.rtype.group)
        return obj

    def list(
        self,
        cluster: str | None,
        rtype: ResourceType,
        namespace: str | None,
        *,
        label_selector: LabelSelector,
        field_selector: FieldSelector,
        limit: int = 0,
        continue_token: str = "",
        visible: Callable[[str, Obj], bool] = lambda cluster, obj: True,
    ) -> ListPage:
        """Objects matching the selectors, sorted by namespace/name, one page at a time. As
        kube-apiserver, a page of a list with selectors tells no remaining count."""
        start = _decode_continue(continue_token) if continue_token else None
        found = (
            (c, o)
            for c, o in self.store.ordered(cluster, rtype.group, rtype.plural, namespace, start)
            if label_selector.matches(o["metadata"].get("labels") or {})
            and field_selector.matches(o)
            and visible(c, o)
        )
        rv = self.store.resource_version
        page = list(itertools.islice(found, limit)) if limit else list(found)
        if not limit or len(page) < limit or next(found, None) is None:
            return ListPage(page, rv, "", None)
        selective = not (label_selector.empty and field_selector.empty)
        remaining = None if selective else 1 + sum(1 for _ in found)
        return ListPage(page, rv, _encode_continue(_sort_key(page[-1]), rv), remaining)

    @contextmanager
    def writing(self, dry_run: bool = False, field_validation: str = "Ignore") -> Iterator[Warnings]:
        """One request's writes: with ``dry_run`` answered but not kept; unknown fields of custom
        resources refused (``Strict``) or yielded as warnings (``Warn``), as ``fieldValidation`` asks.
        """
        outer = (self.dry, self.field_validation, self.warnings)
        self.dry = self.dry or dry_run
        self.field_validation, self.warnings = field_validation, []
        try:
            yield self.warnings
        finally:
            self.dry, self.field_validation, self.warnings = outer

    def _put(self, t: Target, obj: Obj, old: Obj | None) -> Obj:
        if self.dry:
            return dryrun.would_put(obj, old)
        limits.check_stored_size(obj)
        return self.store.put(t.cluster, t.rtype.group, t.rtype.plural, obj, old)

    # ----- writes -----

    def create(self, t: Target, namespace: str, body: Any, track: Track | None = None) -> Obj:
        """Create an object from a request body; ``track`` records its managedFields."""
        obj = self._decode(t, body)
        meta = obj["metadata"]
        if t.rtype.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace
            self._require_open_namespace(t, namespace, str(meta.get("name") or ""))
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = self._generate_name(t, namespace, str(meta["generateName"]))
        sent_managed = meta.get("managedFields")
        for key in (*_SERVER_META, "resourceVersion", "selfLink", "managedFields"):
            meta.pop(key, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        if t.rtype.tracks_generation:
            meta["generation"] = 1
        if t.rtype.status_subresource:
            obj.pop("status", None)
        self._admit(t, obj, None)
        self._validate(t, obj, None)
        if track is not None:
            _set_managed(meta, track(None, {**obj, "metadata": {**meta, "managedFields": sent_managed}}))
        if (
            self.store.get(
                t.cluster,
                t.rtype.group,
                t.rtype.plural,
                namespace if t.rtype.namespaced else "",
                meta["name"],
            )
            is not None
        ):
            raise errors.already_exists(t.rtype.plural, meta["name"], t.rtype.group)
        stored = self._put(t, obj, None)
        self._written(t, stored, None)
        return stored

    def update(
        self,
        t: Target,
        namespace: str,
        name: str,
        body: Any,
        subresource: str = "",
        track: Track | None = None,
    ) -> Obj:
        """Replace an object (PUT), or only its status with ``subresource='status'``."""
        old = self.get(t, namespace, name)
        new = self._decode(t, body)
        if new["metadata"].get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({new['metadata']['name']}) does not match the name on the URL "
                f"({name})"
            )
        self._check_resource_version(t, old, new)
        return self.replace(t, old, new, subresource, track)

    def patch(
        self,
        t: Target,
        namespace: str,
        name: str,
        content_type: str,
        body: bytes,
        subresource: str = "",
        track: Track | None = None,
    ) -> Obj:
        """Apply a merge, JSON or strategic merge patch."""
        old = self.get(t, namespace, name)
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise errors.bad_request(f"error decoding patch: {exc}") from None
        base = {**deep_copy(old), "apiVersion": t.api_version, "kind": t.rtype.kind}
        if t.rtype.converter is not None:
            base = t.rtype.converter.from_storage(base, t.version)
        try:
            if content_type == MERGE_PATCH:
                patched = patch.merge_patch(base, document)
            elif content_type == JSON_PATCH:
                patched = patch.json_patch(base, document)
            elif content_type == STRATEGIC_PATCH:
                # Known by (group, kind): kcp takes strategic merge for Kubernetes kinds also when a
                # CRD or a bound APIResourceSchema serves them (e.g. root:compute's Deployments).
                patch_schema = patch.builtin_patch_schema(t.rtype.group, t.rtype.kind)
                if patch_schema is None:
                    raise errors.unsupported_media_type(
                        f"the body of the request was in an unknown format - accepted media types include: "
                        f"{JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}"
                    )
                patched = patch.strategic_merge_patch(base, document, patch_schema)
            else:
                raise errors.unsupported_media_type(f"the media type {content_type!r} is not a patch type")
        except patch.PatchError as exc:
            raise StatusError(422, "Invalid", str(exc)) from None
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
            raise StatusError(422, "Invalid", "the patch produced an object without metadata")
        if t.rtype.converter is not None:
            patched = t.rtype.converter.to_storage(patched, t.version)
        self._check_resource_version(t, old, patched)
        patched["metadata"]["name"] = name
        return self.replace(t, old, patched, subresource, track)

    def apply(
        self, t: Target, namespace: str, name: str, body: bytes, tracking: Tracking, force: bool
    ) -> Obj:
        """Server-side apply: create the object, or merge the configuration into it (see serverside)."""
        config = serverside.decode(body, t.api_version, t.rtype.kind, name)
        live = self.store.get(t.cluster, t.rtype.group, t.rtype.plural, namespace, name)
        if live is None:
            if tracking.subresource:
                raise errors.not_found(t.rtype.plural, name, t.rtype.group)
            created, managed = serverside.apply(None, config, tracking, force)
            created["metadata"]["name"] = name
            return self.create(t, namespace, created, lambda old, new: managed)
        base = {**deep_copy(live), "apiVersion": t.api_version, "kind": t.rtype.kind}
        if t.rtype.converter is not None:
            base = t.rtype.converter.from_storage(base, t.version)
        merged, managed = serverside.apply(base, config, tracking, force)
        if t.rtype.converter is not None:
            merged = t.rtype.converter.to_storage(merged, t.version)
        return self.replace(t, live, merged, tracking.subresource, lambda old, new: managed)

    def replace(
        self, t: Target, old: Obj, new: Obj, subresource: str = "", track: Track | None = None
    ) -> Obj:
        """Store ``new`` in place of ``old`` under the rules of the main resource or a subresource.

        ``track`` computes the new managedFields; without it (the server's own writes) they stay.
        """
        sent_managed = new["metadata"].get("managedFields")
        if subresource == "status":
            new = {**deep_copy(old), "status": new.get("status")}
            if new["status"] is None:
                del new["status"]
        elif subresource == "finalize":
            new = {
                **deep_copy(old),
                "spec": {**old.get("spec", {}), "finalizers": new.get("spec", {}).get("finalizers")},
            }
        else:
            self._keep_server_fields(t, old, new)
        meta = new["metadata"]
        for key in ("namespace", "name", *_SERVER_META):
            if key in old["metadata"]:
                meta[key] = old["metadata"][key]
            else:
                meta.pop(key, None)
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        new["apiVersion"], new["kind"] = t.api_version, t.rtype.kind
        if t.rtype.tracks_generation and _spec_part(new) != _spec_part(old):
            meta["generation"] = int(meta.get("generation", 1)) + 1
        if not subresource:
            self._admit(t, new, old)
        self._validate(t, new, old)
        if track is not None:
            _set_managed(meta, track(old, {**new, "metadata": {**meta, "managedFields": sent_managed}}))
        else:
            _set_managed(meta, old["metadata"].get("managedFields") or [])
        if _content(new) == _content({**old, "apiVersion": t.api_version, "kind": t.rtype.kind}):
            return old
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and self._removable(t, new):
            return self.remove(t, new)
        stored = self._put(t, new, old)
        self._written(t, stored, old)
        return stored

    def delete(self, t: Target, namespace: str, name: str, options: dict[str, Any]) -> Obj:
        """Delete an object: at once, or mark it with deletionTimestamp while finalizers remain."""
        old = self.get(t, namespace, name)
        preconditions = options.get("preconditions") or {}
        for field in ("uid", "resourceVersion"):
            if preconditions.get(field) and preconditions[field] != old["metadata"].get(field):
                raise errors.conflict(
                    t.rtype.plural,
                    name,
                    t.rtype.group,
                    f"Precondition failed: {field} in precondition: {preconditions[field]}, "
                    f"{field} in object meta: {old['metadata'].get(field)}",
                )
        if old["metadata"].get("deletionTimestamp"):
            return old
        namespace_type = (t.rtype.group, t.rtype.plural) == ("", "namespaces")
        if namespace_type and name in kinds.PROTECTED_NAMESPACES:
            raise errors.forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted')
        return self.mark_deleted(t, old, () if namespace_type else _propagation_finalizers(options))

    def mark_deleted(self, t: Target, old: Obj, finalizers: tuple[str, ...] = ()) -> Obj:
        """Set deletionTimestamp (adding ``finalizers``), or remove the object when nothing holds it."""
        new = deep_copy(old)
        new["metadata"]["deletionTimestamp"] = now_rfc3339()
        held = new["metadata"].get("finalizers") or []
        if finalizers:
            new["metadata"]["finalizers"] = [*held, *(f for f in finalizers if f not in held)]
        new["metadata"]["deletionGracePeriodSeconds"] = 0
        if (t.rtype.group, t.rtype.plural) == ("", "namespaces"):
            new["status"] = {**new.get("status", {}), "phase": "Terminating"}
        if not new["metadata"].get("finalizers") and self._removable(t, new):
            return self.remove(t, old)
        stored = self._put(t, new, old)
        self._written(t, stored, old)
        return stored

    def remove(self, t: Target, obj: Obj) -> Obj:
        """Drop an object from storage now."""
        if self.dry:
            return dryrun.would_remove(obj)
        removed = self.store.remove(t.cluster, t.rtype.group, t.rtype.plural, obj)
        for hook in self.on_remove:
            hook(t, removed)
        return removed

    # ----- helpers -----

    def _written(self, t: Target, new: Obj, old: Obj | None) -> None:
        if self.dry:
            return
        for hook in self.on_write:
            hook(t, new, old)

    def _admit(self, t: Target, new: Obj, old: Obj | None) -> None:
        for hook in self.admission:
            hook(t, new, old)

    def _removable(self, t: Target, obj: Obj) -> bool:
        """Namespaces and CRDs are held by their contents (the lifecycle removes them when empty)."""
        return (t.rtype.group, t.rtype.plural) not in {
            ("", "namespaces"),
            (kinds.CRD_GROUP, "customresourcedefinitions"),
        }

    def _decode(self, t: Target, body: Any) -> Obj:
        if not isinstance(body, dict):
            raise errors.bad_request("the request body must be a JSON object")
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if api_version and api_version != t.api_version:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({t.api_version})"
            )
        if kind and kind != t.rtype.kind:
            raise errors.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({t.rtype.kind})"
            )
        obj: Obj = deep_copy(body)
        obj["apiVersion"], obj["kind"] = t.api_version, t.rtype.kind
        if not isinstance(obj.get("metadata"), dict):
            obj["metadata"] = {}
        if t.rtype.converter is not None:
            obj = t.rtype.converter.to_storage(obj, t.version)
        return obj

    def _keep_server_fields(self, t: Target, old: Obj, new: Obj) -> None:
        if t.rtype.status_subresource:
            if "status" in old:
                new["status"] = deep_copy(old["status"])
            else:
                new.pop("status", None)
        deleting = old["metadata"].get("deletionTimestamp")
        added = set(new["metadata"].get("finalizers") or []) - set(old["metadata"].get("finalizers") or [])
        if deleting and added:
            raise errors.invalid(
                t.rtype.kind,
                old["metadata"]["name"],
                [
                    FieldError(
                        "metadata.finalizers",
                        "FieldValueForbidden",
                        "Forbidden: no new finalizers can be added if the object is being deleted, "
                        "found new finalizers "
                        f"{sorted(added)}",
                    )
                ],
                t.rtype.group,
            )

    def _check_resource_version(self, t: Target, old: Obj, new: Obj) -> None:
        wanted = new["metadata"].get("resourceVersion")
        if wanted and wanted != old["metadata"]["resourceVersion"]:
            raise errors.conflict(t.rtype.plural, old["metadata"]["name"], t.rtype.group)

    def _validate(self, t: Target, obj: Obj, old: Obj | None) -> None:
        meta = obj["metadata"]
        name = str(meta.get("name") or "")
        problems = validate_object_meta(
            meta, namespaced=t.rtype.namespaced, name_validator=lambda n: kinds.name_errors(t.rtype, n)
        )
        if t.rtype.custom and self.field_validation != "Ignore":
            self._check_unknown_fields(t, obj)
        problems += kinds.prepare(t.rtype, t.version, obj, old)
        problems += limits.data_size_errors(t.rtype, obj)
        if problems:
            raise errors.invalid(t.rtype.kind, name, problems, t.rtype.group)

    def _check_unknown_fields(self, t: Target, obj: Obj) -> None:
        body_schema = t.rtype.schemas.get(t.version)
        unknown = schema.unknown_fields(obj, body_schema) if body_schema else []
        found = [f'unknown field "{path}"' for path in unknown]
        if found and self.field_validation == "Strict":
            kind = t.rtype.kind
            raise errors.bad_request(
                f'{kind} in version "{t.version}" cannot be handled as a {kind}: strict decoding error: '
                + ", ".join(found)
            )
        self.warnings.extend(found)

    def _require_open_namespace(self, t: Target, namespace: str, name: str) -> None:
        phase = self._namespace_phase(t.cluster, namespace)
        if phase is None:
            raise errors.not_found("namespaces", namespace)
        if phase == "Terminating":
            raise errors.namespace_terminating(t.rtype.plural, name, namespace, t.rtype.group)

    def _namespace_phase(self, cluster: str, namespace: str) -> str | None:
        ns = self.store.get(cluster, "", "namespaces", "", namespace)
        if ns is None:
            return None
        return str(ns.get("status", {}).get("phase", "Active"))

    def _generate_name(self, t: Target, namespace: str, prefix: str) -> str:
        for _ in range(16):
            name = prefix + "".join(random.choices(_GENERATE_ALPHABET, k=5))
            if self.store.get(t.cluster, t.rtype.group, t.rtype.plural, namespace, name) is None:
                return name
        raise StatusError(500, "AlreadyExists", f"could not generate a unique name for {prefix!r}")


FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"
_PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")


def _propagation_finalizers(options: dict[str, Any]) -> tuple[str, ...]:
    """The garbage collector's finalizer a deletion asks for, as kube-apiserver records it."""
    policy = options.get("propagationPolicy")
    if policy is not None and policy not in _PROPAGATION_POLICIES:
        supported = ", ".join(f'"{p}"' for p in _PROPAGATION_POLICIES)
        raise errors.invalid(
            "DeleteOptions",
            "",
            [
                FieldError(
                    "propagationPolicy",
                    "FieldValueNotSupported",
                    f'Unsupported value: "{policy}": supported values: {supported}',
                )
            ],
            "meta.k8s.io",
        )
    if policy == "Foreground":
        return (FOREGROUND_FINALIZER,)
    if policy == "Orphan" or (policy is None and options.get("orphanDependents") is True):
        return (ORPHAN_FINALIZER,)
    return ()


def _set_managed(meta: Obj, entries: list[Obj]) -> None:
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)


def _sort_key(item: tuple[str, Obj]) -> tuple[str, str, str]:
    meta = item[1]["metadata"]
    return (meta.get("namespace", ""), meta["name"], item[0])


def _encode_continue(key: tuple[str, str, str], rv: int) -> str:
    return base64.urlsafe_b64encode(orjson.dumps({"rv": rv, "start": list(key)})).decode()


def _decode_continue(token: str) -> tuple[str, str, str]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        namespace, name, cluster = data["start"]
        return (str(namespace), str(name), str(cluster))
    except (binascii.Error, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise errors.bad_request(f"continue key is not valid: {token!r}") from None
