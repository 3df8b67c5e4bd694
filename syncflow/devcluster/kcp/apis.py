"""APIResourceSchemas, APIExports and APIBindings: what kcp's admission and apis controllers do.

- An APIResourceSchema is named ``<prefix>.<plural>.<group>`` and its spec is immutable.
- An APIExport gets an identity (Secret ``kcp-system/<name>``, ``status.identityHash``) and a
  same-name APIExportEndpointSlice whose URL is published only while a binding exists.
- An APIBinding resolves its export, serves the export's schemas in its workspace like CRDs
  (``NamingConflicts`` when a CRD or another binding has the resource), and records
  ``boundResources``; accepted permission claims label the claimed objects.
"""

from __future__ import annotations

import base64
import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from syncflow.devcluster import errors, kinds
from syncflow.devcluster.crud import Objects, Target, now_rfc3339
from syncflow.devcluster.errors import FieldError
from syncflow.devcluster.kcp.conditions import keep_transition_times
from syncflow.devcluster.kcp.hashes import (
    CLAIM_LABEL_PREFIX,
    EXPORT_LABEL,
    PATH_ANNOTATION,
    claim_hash,
    claim_label,
    export_hash,
    identity_hash,
)
from syncflow.devcluster.kcp.tenancy import ROOT, Tenancy
from syncflow.devcluster.kcp.types import APIS, schema_group_resource, schema_resource_type
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy

IDENTITY_NAMESPACE = "kcp-system"
SKIP_SLICE_ANNOTATION = "apiexports.apis.kcp.io/skip-endpointslice"
_SCHEMA_PREFIX = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DOTLESS_GROUPS = ("apps", "batch", "extensions", "policy", "autoscaling")


@dataclass(frozen=True)
class Binding:
    """Which binding serves a group/resource in a workspace, and for which export."""

    binding: str
    export_cluster: str
    export_name: str
    identity: str
    schema: str


def _is(t: Target, group: str, plural: str) -> bool:
    return (t.rtype.group, t.rtype.plural) == (group, plural)


def _condition(kind: str, ok: bool, reason: str = "", message: str = "") -> Obj:
    condition: Obj = {"type": kind, "status": "True" if ok else "False", "lastTransitionTime": now_rfc3339()}
    if not ok:
        condition.update({"severity": "Error", "reason": reason, "message": message})
    return condition


def accepted_claims(binding: Obj) -> Iterator[Obj]:
    """The permission claims a binding accepted."""
    for claim in (binding.get("spec") or {}).get("permissionClaims") or []:
        if claim.get("state") == "Accepted":
            yield claim


def _normal_group(group: str, resource: str) -> str:
    """Events of either group count as core events, as kcp normalises them."""
    return "" if (group, resource) == ("events.k8s.io", "events") else group


class APIs:
    """The apis.kcp.io admission rules and controllers, run synchronously after each write."""

    def __init__(
        self, objects: Objects, registry: Registry, tenancy: Tenancy, base_url: Callable[[], str]
    ) -> None:
        self.objects = objects
        self.store = objects.store
        self.registry = registry
        self.tenancy = tenancy
        self.base_url = base_url
        self.bound: dict[tuple[str, str, str], Binding] = {}
        objects.admission.append(self._admit)
        objects.on_write.append(self._after_write)
        objects.on_remove.append(self._after_remove)

    # ----- lookups -----

    def target(self, cluster: str, plural: str, group: str = APIS) -> Target:
        """A target for a built-in or kcp type at its stored version."""
        rtype = self.registry.by_group_resource(cluster, group, plural)
        assert rtype is not None
        return Target(cluster, rtype, rtype.versions[0])

    def export(self, cluster: str, name: str) -> Obj | None:
        """An APIExport."""
        return self.store.get(cluster, APIS, "apiexports", "", name)

    def bindings(self, cluster: str | None = None) -> Iterator[tuple[str, Obj]]:
        """(cluster, APIBinding) pairs, in one cluster or all."""
        yield from self.store.items(cluster, APIS, "apibindings")

    def binding_for(self, cluster: str, export_cluster: str, export_name: str) -> Obj | None:
        """The binding in ``cluster`` to the given export, as the virtual workspace authorizer finds it."""
        for _, binding in self.bindings(cluster):
            ref = (binding.get("spec") or {}).get("reference", {}).get("export", {})
            if (
                ref.get("name") == export_name
                and binding.get("status", {}).get("apiExportClusterName") == export_cluster
            ):
                return binding
        return None

    def _resolve_export(self, cluster: str, binding: Obj) -> tuple[str | None, str]:
        ref = (binding.get("spec") or {}).get("reference", {}).get("export", {})
        path = ref.get("path") or self.tenancy.path_of(cluster)
        return self.tenancy.resolve(path), str(ref.get("name", ""))

    # ----- admission -----

    def _admit(self, t: Target, new: Obj, old: Obj | None) -> None:
        if _is(t, APIS, "apiresourceschemas"):
            self._admit_schema(new, old)
        elif _is(t, APIS, "apiexports"):
            path = self.tenancy.path_of(t.cluster)
            if path != ROOT:
                new["metadata"].setdefault("annotations", {})[PATH_ANNOTATION] = path
        elif _is(t, APIS, "apibindings"):
            self._admit_binding(t, new, old)
        elif _is(t, kinds.CRD_GROUP, "customresourcedefinitions") and old is None:
            spec = new.get("spec") or {}
            holder = self.bound.get(
                (t.cluster, spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
            )
            if holder is not None:
                crd_name = new["metadata"].get("name")
                raise errors.forbidden(
                    f'customresourcedefinitions.apiextensions.k8s.io "{crd_name}" is forbidden: '
                    f'cannot create because resource is bound by APIBinding "{holder.binding}"'
                )
        self._label_claimed(t, new)

    def _admit_schema(self, new: Obj, old: Obj | None) -> None:
        name = str(new["metadata"].get("name", ""))
        spec = new.get("spec") or {}
        problems: list[FieldError] = []
        if old is not None:
            if spec != old.get("spec"):
                problems.append(FieldError("spec", "FieldValueForbidden", "Forbidden: is immutable"))
        else:
            group = spec.get("group", "")
            plural = (spec.get("names") or {}).get("plural", "")
            suffix = f".{plural}.{group or 'core'}"
            prefix = name[: -len(suffix)] if name.endswith(suffix) else ""
            if not prefix or not _SCHEMA_PREFIX.match(prefix):
                problems.append(
                    FieldError(
                        "metadata.name",
                        "FieldValueInvalid",
                        f'Invalid value: "{name}": must be of the format "<prefix>{suffix}"',
                    )
                )
            if group == "core" or (group and "." not in group and group not in _DOTLESS_GROUPS):
                problems.append(
                    FieldError(
                        "spec.group", "FieldValueInvalid", f'Invalid value: "{group}": must contain a dot'
                    )
                )
            versions = spec.get("versions") or []
            if sum(1 for v in versions if v.get("storage")) != 1:
                problems.append(
                    FieldError(
                        "spec.versions",
                        "FieldValueInvalid",
                        "Invalid value: exactly one version must be the storage version",
                    )
                )
        if problems:
            raise errors.invalid("APIResourceSchema", name, problems, APIS)

    def _admit_binding(self, t: Target, new: Obj, old: Obj | None) -> None:
        if old is not None and (new.get("spec") or {}).get("reference") != (old.get("spec") or {}).get(
            "reference"
        ):
            raise errors.invalid(
                "APIBinding",
                new["metadata"]["name"],
                [
                    FieldError(
                        "spec.reference",
                        "FieldValueInvalid",
                        "Invalid value: APIExport reference must not be changed",
                    )
                ],
                APIS,
            )
        export_cluster, export_name = self._resolve_export(t.cluster, new)
        if export_cluster is not None and export_name:
            new["metadata"].setdefault("labels", {})[EXPORT_LABEL] = export_hash(export_cluster, export_name)

    def _label_claimed(self, t: Target, new: Obj) -> None:
        """Put the claim label of every binding here that accepted a claim on this resource."""
        labels = {
            k: v
            for k, v in (new["metadata"].get("labels") or {}).items()
            if not k.startswith(CLAIM_LABEL_PREFIX)
        }
        group = _normal_group(t.rtype.group, t.rtype.plural)
        for _, binding in self.bindings(t.cluster):
            export_cluster = binding.get("status", {}).get("apiExportClusterName")
            export_name = (binding.get("spec") or {}).get("reference", {}).get("export", {}).get("name")
            if not export_cluster or not export_name:
                continue
            for claim in accepted_claims(binding):
                if (
                    _normal_group(claim.get("group", ""), claim.get("resource", "")),
                    claim.get("resource"),
                ) == (group, t.rtype.plural):
                    identity = claim.get("identityHash", "")
                    labels[claim_label(export_cluster, export_name)] = claim_hash(
                        group, t.rtype.plural, identity
                    )
        if labels:
            new["metadata"]["labels"] = labels
        else:
            new["metadata"].pop("labels", None)

    # ----- controllers -----

    def _after_write(self, t: Target, new: Obj, old: Obj | None) -> None:
        if new["metadata"].get("deletionTimestamp"):
            return
        if _is(t, APIS, "apiexports"):
            self._reconcile_export(t, new)
        elif _is(t, APIS, "apibindings"):
            self._reconcile_binding(t.cluster, new)

    def _after_remove(self, t: Target, obj: Obj) -> None:
        if not _is(t, APIS, "apibindings"):
            return
        name = obj["metadata"]["name"]
        for key, holder in list(self.bound.items()):
            if key[0] == t.cluster and holder.binding == name:
                self._unbind(t.cluster, key[1], key[2])
        if t.cluster not in self.tenancy.clusters():
            return  # the whole workspace is going away
        export_cluster, export_name = self._resolve_export(t.cluster, obj)
        if export_cluster is not None:
            self._publish_endpoints(export_cluster, export_name)

    def _unbind(self, cluster: str, group: str, plural: str) -> None:
        del self.bound[(cluster, group, plural)]
        for _, obj in list(self.store.items(cluster, group, plural)):
            self.store.remove(cluster, group, plural, obj)
        self.registry.unregister(cluster, group, plural)
        self.store.end_watches(cluster, group, plural)

    def _reconcile_export(self, t: Target, export: Obj) -> None:
        name = export["metadata"]["name"]
        updated = deep_copy(export)
        spec = updated.setdefault("spec", {})
        if not (spec.get("identity") or {}).get("secretRef"):
            spec["identity"] = {"secretRef": {"namespace": IDENTITY_NAMESPACE, "name": name}}
            export = self.objects.replace(t, export, updated)  # re-enters this controller
            return
        key = self._identity_key(t.cluster, spec["identity"]["secretRef"])
        status = {**(export.get("status") or {}), "identityHash": identity_hash(key)}
        status["conditions"] = keep_transition_times(
            (export.get("status") or {}).get("conditions") or [],
            [_condition("IdentityValid", True), _condition("VirtualWorkspaceURLsReady", True)],
        )
        if status != export.get("status"):
            export = self.objects.replace(t, export, {**deep_copy(export), "status": status}, "status")
        if SKIP_SLICE_ANNOTATION not in (export["metadata"].get("annotations") or {}):
            self._ensure_slice(t.cluster, export)
        for cluster, binding in list(self.bindings()):
            ref_cluster, ref_name = self._resolve_export(cluster, binding)
            if (ref_cluster, ref_name) == (t.cluster, name):
                self._reconcile_binding(cluster, binding)

    def _identity_key(self, cluster: str, ref: Obj) -> bytes:
        namespace, name = ref.get("namespace", IDENTITY_NAMESPACE), ref["name"]
        secret = self.store.get(cluster, "", "secrets", namespace, name)
        if secret is None:
            if self.store.get(cluster, "", "namespaces", "", namespace) is None:
                self.objects.create(
                    self.target(cluster, "namespaces", ""), "", {"metadata": {"name": namespace}}
                )
            key = secrets.token_hex(32).encode()
            secret = self.objects.create(
                self.target(cluster, "secrets", ""),
                namespace,
                {"metadata": {"name": name}, "data": {"key": base64.b64encode(key).decode()}},
            )
        return base64.b64decode(secret.get("data", {}).get("key", ""))

    def _ensure_slice(self, cluster: str, export: Obj) -> None:
        name = export["metadata"]["name"]
        if self.store.get(cluster, APIS, "apiexportendpointslices", "", name) is None:
            self.objects.create(
                self.target(cluster, "apiexportendpointslices"),
                "",
                {
                    "metadata": {
                        "name": name,
                        "ownerReferences": [
                            {
                                "apiVersion": f"{APIS}/v1alpha1",
                                "kind": "APIExport",
                                "name": name,
                                "uid": export["metadata"]["uid"],
                            }
                        ],
                    },
                    "spec": {"export": {"name": name, "path": self.tenancy.path_of(cluster)}},
                },
            )
        self._publish_endpoints(cluster, name)

    def _publish_endpoints(self, export_cluster: str, export_name: str) -> None:
        """Publish the virtual workspace URL on the slice while at least one binding is bound."""
        endpoint_slice = self.store.get(export_cluster, APIS, "apiexportendpointslices", "", export_name)
        if endpoint_slice is None:
            return
        bound = any(
            binding.get("status", {}).get("phase") == "Bound"
            for cluster, binding in self.bindings()
            if self._resolve_export(cluster, binding) == (export_cluster, export_name)
        )
        url = f"{self.base_url()}/services/apiexport/{export_cluster}/{export_name}"
        status: Obj = {"endpoints": [{"url": url}] if bound else []}
        status["conditions"] = keep_transition_times(
            (endpoint_slice.get("status") or {}).get("conditions") or [], [_condition("APIExportValid", True)]
        )
        if status != endpoint_slice.get("status"):
            self.objects.replace(
                self.target(export_cluster, "apiexportendpointslices"),
                endpoint_slice,
                {**deep_copy(endpoint_slice), "status": status},
                "status",
            )

    def _reconcile_binding(self, cluster: str, binding: Obj) -> None:
        export_cluster, export_name = self._resolve_export(cluster, binding)
        export = self.export(export_cluster, export_name) if export_cluster else None
        status: Obj = dict(binding.get("status") or {})
        identity = (export or {}).get("status", {}).get("identityHash", "")
        if export is None or not identity or export_cluster is None:
            reason, message = (
                ("APIExportNotFound", f'APIExport "{export_name}" not found')
                if export is None
                else ("MissingIdentityHash", f'APIExport "{export_name}" has no identity yet')
            )
            status.update(
                phase="Binding",
                conditions=[
                    _condition("APIExportValid", False, reason, message),
                    _condition("InitialBindingCompleted", False, "WaitingForEstablished", message),
                    _condition("Ready", False, "WaitingForEstablished", message),
                ],
            )
        else:
            bound, conflicts = self._bind_schemas(cluster, binding, export_cluster, export, identity)
            ok = not conflicts
            message = "; ".join(conflicts)
            was_bound = (binding.get("status") or {}).get("phase") == "Bound"
            status.update(
                phase="Bound" if ok or was_bound else "Binding",  # kcp never takes a binding back to Binding
                apiExportClusterName=export_cluster,
                boundResources=bound,
                exportPermissionClaims=deep_copy(export.get("spec", {}).get("permissionClaims") or []),
                conditions=[
                    _condition("APIExportValid", True),
                    _condition("BindingUpToDate", ok, "NamingConflicts", message),
                    _condition("InitialBindingCompleted", ok or was_bound, "NamingConflicts", message),
                    _condition("PermissionClaimsValid", True),
                    _condition("PermissionClaimsApplied", True),
                    _condition("Ready", ok or was_bound, "NamingConflicts", message),
                ],
            )
        status["conditions"] = keep_transition_times(
            (binding.get("status") or {}).get("conditions") or [], status["conditions"]
        )
        t = self.target(cluster, "apibindings")
        if status != binding.get("status"):
            binding = self.objects.replace(t, binding, {**deep_copy(binding), "status": status}, "status")
        self._relabel_claimed(cluster, binding)
        if export_cluster is not None:
            self._publish_endpoints(export_cluster, export_name)

    def _bind_schemas(
        self, cluster: str, binding: Obj, export_cluster: str, export: Obj, identity: str
    ) -> tuple[list[Obj], list[str]]:
        name = binding["metadata"]["name"]
        bound: list[Obj] = []
        conflicts: list[str] = []
        for schema_name in (export.get("spec") or {}).get("latestResourceSchemas") or []:
            schema = self.store.get(export_cluster, APIS, "apiresourceschemas", "", schema_name)
            if schema is None:
                conflicts.append(f'APIResourceSchema "{schema_name}" not found')
                continue
            rtype = schema_resource_type(schema)
            key = (cluster, rtype.group, rtype.plural)
            holder = self.bound.get(key)
            crd = self.store.get(
                cluster, kinds.CRD_GROUP, "customresourcedefinitions", "", f"{rtype.plural}.{rtype.group}"
            )
            if crd is not None or (holder is not None and holder.binding != name):
                owner = (
                    f'CustomResourceDefinition "{rtype.plural}.{rtype.group}"'
                    if crd is not None
                    else f'APIBinding "{holder.binding if holder else ""}"'
                )
                conflicts.append(f"naming conflict with {owner} for {rtype.group_resource}")
                continue
            if holder is None or holder.schema != schema_name:
                self.registry.register(cluster, rtype)
                self.bound[key] = Binding(
                    name, export_cluster, export["metadata"]["name"], identity, schema_name
                )
            bound.append(
                {
                    "group": rtype.group,
                    "resource": rtype.plural,
                    "schema": {
                        "name": schema_name,
                        "UID": schema["metadata"]["uid"],
                        "identityHash": identity,
                    },
                    "storageVersions": [rtype.versions[0]],
                }
            )
        return bound, conflicts

    def _relabel_claimed(self, cluster: str, binding: Obj) -> None:
        """Label objects of newly accepted claims (kcp's permission-claim labeller)."""
        export_cluster = binding.get("status", {}).get("apiExportClusterName")
        export_name = (binding.get("spec") or {}).get("reference", {}).get("export", {}).get("name")
        if not export_cluster or not export_name:
            return
        label = claim_label(export_cluster, export_name)
        for claim in accepted_claims(binding):
            group = _normal_group(claim.get("group", ""), claim.get("resource", ""))
            rtype = self.registry.by_group_resource(cluster, group, claim.get("resource", ""))
            if rtype is None:
                continue
            t = Target(cluster, rtype, rtype.versions[0])
            for _, obj in list(self.store.items(cluster, rtype.group, rtype.plural)):
                if label not in (obj["metadata"].get("labels") or {}):
                    self.objects.replace(t, obj, deep_copy(obj))

    def claimed_type_allowed(self, binding: Obj, group: str, plural: str, identity: str = "") -> bool:
        """Whether ``binding`` accepted a claim on ``plural.group``."""
        group = _normal_group(group, plural)
        return any(
            (_normal_group(c.get("group", ""), c.get("resource", "")), c.get("resource")) == (group, plural)
            and c.get("identityHash", "") == identity
            for c in accepted_claims(binding)
        )

    def export_schemas(self, export_cluster: str, export: Obj) -> list[Obj]:
        """The APIResourceSchemas an export currently names."""
        found = []
        for name in (export.get("spec") or {}).get("latestResourceSchemas") or []:
            schema = self.store.get(export_cluster, APIS, "apiresourceschemas", "", name)
            if schema is not None:
                found.append(schema)
        return found

    def schema_by_identity(self, group: str, plural: str, identity: str) -> Obj | None:
        """The schema of another export's resource, found by that export's identity hash."""
        for cluster in self.tenancy.clusters():
            for _, export in self.store.items(cluster, APIS, "apiexports"):
                if export.get("status", {}).get("identityHash") != identity:
                    continue
                for schema in self.export_schemas(cluster, export):
                    if schema_group_resource(schema["metadata"]["name"]) == (group, plural):
                        return schema
        return None
