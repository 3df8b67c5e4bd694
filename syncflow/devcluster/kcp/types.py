"""kcp's own resource types, the Kubernetes types a workspace serves, and the v1alpha1 ⇄ v1alpha2
views of APIExport and APIBinding.

Objects are stored in the v1alpha1 shape (the one api-syncagent uses); v1alpha2 requests are
converted on the way in and out. Claim verbs other than ``*`` survive a v1alpha1 round trip in an
annotation, as kcp keeps data that does not fit the other version.
"""

from __future__ import annotations

import json
from typing import Any

from syncflow.api import crdgen, synctarget
from syncflow.devcluster.resources import BUILTIN_TYPES, ResourceType, crd_resource_type
from syncflow.util.jsonvalues import deep_copy

Obj = dict[str, Any]

APIS = "apis.kcp.io"
TENANCY = "tenancy.kcp.io"
CORE = "core.kcp.io"
_VERBS_ANNOTATION = "apis.v1alpha2.kcp.io/permission-claim-verbs"


def _claim_key(claim: Obj) -> str:
    return f"{claim.get('resource', '')}.{claim.get('group', '')}:{claim.get('identityHash', '')}"


def _claims_to_v1alpha1(claims: list[Obj], verbs: dict[str, list[str]]) -> list[Obj]:
    converted = []
    for claim in claims:
        out = {k: v for k, v in claim.items() if k not in ("verbs", "selector")}
        out["all"] = True
        if claim.get("verbs") and claim["verbs"] != ["*"]:
            verbs[_claim_key(claim)] = claim["verbs"]
        converted.append(out)
    return converted


def _claims_to_v1alpha2(claims: list[Obj], verbs: dict[str, list[str]], selector: bool) -> list[Obj]:
    converted = []
    for claim in claims:
        out = {k: v for k, v in claim.items() if k not in ("all", "resourceSelector")}
        out["verbs"] = verbs.get(_claim_key(claim), ["*"])
        if selector:
            out["selector"] = {"matchAll": True}
        converted.append(out)
    return converted


def _saved_verbs(obj: Obj) -> dict[str, list[str]]:
    raw = (obj["metadata"].get("annotations") or {}).get(_VERBS_ANNOTATION)
    return json.loads(raw) if raw else {}


def _save_verbs(obj: Obj, verbs: dict[str, list[str]]) -> None:
    annotations = obj["metadata"].setdefault("annotations", {}) or {}
    if verbs:
        annotations[_VERBS_ANNOTATION] = json.dumps(verbs, sort_keys=True)
    else:
        annotations.pop(_VERBS_ANNOTATION, None)
    obj["metadata"]["annotations"] = annotations
    if not annotations:
        del obj["metadata"]["annotations"]


def schema_group_resource(schema_name: str) -> tuple[str, str]:
    """(group, plural) of an APIResourceSchema named ``<prefix>.<plural>.<group>`` (``core`` = '')."""
    _, plural, group = schema_name.split(".", 2)
    return ("" if group == "core" else group), plural


class APIExportConverter:
    """v1alpha2 ``spec.resources`` ⇄ v1alpha1 ``spec.latestResourceSchemas``; claims with verbs."""

    def to_storage(self, obj: Obj, version: str) -> Obj:
        """v1alpha1 form of an APIExport sent at ``version``."""
        if version == "v1alpha1":
            return obj
        out = deep_copy(obj)
        spec = out.setdefault("spec", {})
        resources = spec.pop("resources", None) or []
        spec["latestResourceSchemas"] = [r["schema"] for r in resources if r.get("schema")]
        verbs: dict[str, list[str]] = {}
        spec["permissionClaims"] = _claims_to_v1alpha1(spec.get("permissionClaims") or [], verbs)
        _save_verbs(out, verbs)
        return out

    def from_storage(self, obj: Obj, version: str) -> Obj:
        """An APIExport as served at ``version``."""
        if version == "v1alpha1":
            return obj
        out = deep_copy(obj)
        spec = out.setdefault("spec", {})
        resources = []
        for schema in spec.pop("latestResourceSchemas", None) or []:
            group, plural = schema_group_resource(schema)
            resources.append({"name": plural, "group": group, "schema": schema, "storage": {"crd": {}}})
        spec["resources"] = resources
        spec.pop("maximalPermissionPolicy", None)
        spec["permissionClaims"] = _claims_to_v1alpha2(
            spec.get("permissionClaims") or [], _saved_verbs(out), False
        )
        _save_verbs(out, {})
        return out


class APIBindingConverter:
    """Claims with ``all``/``state`` (v1alpha1) ⇄ claims with ``verbs``/``selector``/``state`` (v1alpha2)."""

    def to_storage(self, obj: Obj, version: str) -> Obj:
        """v1alpha1 form of an APIBinding sent at ``version``."""
        if version == "v1alpha1":
            return obj
        out = deep_copy(obj)
        verbs: dict[str, list[str]] = {}
        spec = out.setdefault("spec", {})
        spec["permissionClaims"] = _claims_to_v1alpha1(spec.get("permissionClaims") or [], verbs)
        status = out.get("status") or {}
        if "exportPermissionClaims" in status:
            status["exportPermissionClaims"] = _claims_to_v1alpha1(status["exportPermissionClaims"], {})
        _save_verbs(out, verbs)
        return out

    def from_storage(self, obj: Obj, version: str) -> Obj:
        """An APIBinding as served at ``version``."""
        if version == "v1alpha1":
            return obj
        out = deep_copy(obj)
        verbs = _saved_verbs(out)
        spec = out.setdefault("spec", {})
        spec["permissionClaims"] = _claims_to_v1alpha2(spec.get("permissionClaims") or [], verbs, True)
        status = out.get("status") or {}
        if "exportPermissionClaims" in status:
            status["exportPermissionClaims"] = _claims_to_v1alpha2(
                status["exportPermissionClaims"], {}, False
            )
        _save_verbs(out, {})
        return out


def _kcp_type(
    group: str,
    kind: str,
    plural: str,
    *,
    versions: tuple[str, ...] = ("v1alpha1",),
    status: bool = True,
    short: tuple[str, ...] = (),
    converter: Any = None,
) -> ResourceType:
    return ResourceType(
        group=group,
        versions=versions,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=False,
        short_names=short,
        categories=("kcp",),
        status_subresource=status,
        converter=converter,
    )


KCP_TYPES: tuple[ResourceType, ...] = (
    _kcp_type(TENANCY, "Workspace", "workspaces", short=("ws",)),
    _kcp_type(CORE, "LogicalCluster", "logicalclusters"),
    _kcp_type(APIS, "APIResourceSchema", "apiresourceschemas", status=False),
    _kcp_type(
        APIS, "APIExport", "apiexports", versions=("v1alpha1", "v1alpha2"), converter=APIExportConverter()
    ),
    _kcp_type(APIS, "APIExportEndpointSlice", "apiexportendpointslices"),
    _kcp_type(
        APIS, "APIBinding", "apibindings", versions=("v1alpha1", "v1alpha2"), converter=APIBindingConverter()
    ),
    # kcp v0.11 served SyncTargets in every workspace (bound from root's workload.kcp.io export);
    # the schema is syncflow's own model of the type.
    crd_resource_type(crdgen.crd(synctarget.API_TYPE)),
)


# The Kubernetes types a kcp workspace serves on its own, as kcp v0.11 lists its built-in APIs
# (docs/content/en/concepts/apis-in-kcp.md; pkg/virtual/apiexport/schemas/builtin/builtin.go):
# no workloads (Pods, Deployments, ...), no Services, no Nodes, no storage. Those come from an
# APIExport such as root:compute's "kubernetes". Types listed here are served as far as devcluster
# implements them.
WORKSPACE_BUILTINS = frozenset(
    {
        ("", "namespaces"),
        ("", "configmaps"),
        ("", "secrets"),
        ("", "events"),
        ("", "limitranges"),
        ("", "resourcequotas"),
        ("", "serviceaccounts"),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("authentication.k8s.io", "tokenreviews"),
        ("authorization.k8s.io", "localsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
        ("certificates.k8s.io", "certificatesigningrequests"),
        ("coordination.k8s.io", "leases"),
        ("events.k8s.io", "events"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("rbac.authorization.k8s.io", "roles"),
    }
)


def workspace_builtin_types() -> tuple[ResourceType, ...]:
    """The built-in types that a kcp workspace serves."""
    return tuple(t for t in BUILTIN_TYPES if (t.group, t.plural) in WORKSPACE_BUILTINS)


def schema_resource_type(schema: Obj) -> ResourceType:
    """The resource type an APIResourceSchema serves once bound (like a CRD of the same spec)."""
    spec = schema["spec"]
    versions = [{**v, "schema": {"openAPIV3Schema": v.get("schema") or {}}} for v in spec["versions"]]
    return crd_resource_type({"spec": {**spec, "versions": versions}})
