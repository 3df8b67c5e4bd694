"""Which resource types a SyncTarget syncs, and whether kcp and the physical cluster both serve them.

The types are the workspace's ConfigMaps and Secrets (``--resources``), every resource of
``spec.supportedAPIExports`` (a named ``resource``, or all of the export's schemas), and the workspace's
CRDs with their types (except CRDs of ``*.kcp.io`` groups: control-plane APIs, not workloads). Each
is checked against the workspace's discovery (Pending until it is served there, e.g. before the
APIExport is bound) and the physical cluster's (Accepted when served and, where a CRD serves it
there, that CRD takes every value kcp's schema takes; Incompatible otherwise, naming the fields the
cluster lacks — except a workspace CRD's type, which stays Pending until the synced CRD is
established).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from syncflow.api.synctarget import SupportedAPIExport, SyncTarget
from syncflow.kube.clients import for_cluster
from syncflow.kube.crds import storage_version
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.schema_compat import Verdict, crd_spec, judge, offered_spec
from syncflow.sync.discovery import find_resource
from syncflow.sync.rule import Resource

Obj = dict[str, Any]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD_TYPE = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
COMPUTE_PATH = "root:compute"
"""Where kcp v0.11 keeps the ``kubernetes`` APIExport."""


@dataclass(frozen=True)
class TypeRef:
    """A resource type to sync: group, version, plural; ``from_crd`` for a workspace CRD's type."""

    group: str
    version: str
    plural: str
    from_crd: bool = False

    @classmethod
    def parse(cls, text: str) -> TypeRef:
        """``<group>/<version>/<plural>``, ``<version>/<plural>`` (core) or ``<plural>`` (core v1)."""
        parts = text.strip().split("/")
        if len(parts) == 3:
            return cls(parts[0], parts[1], parts[2])
        if len(parts) == 2:
            return cls("", parts[0], parts[1])
        plural, _, group = parts[0].partition(".")
        if group:
            raise ValueError(f"resource {text!r}: want <group>/<version>/<plural> for a non-core type")
        return cls("", "v1", plural)

    @property
    def group_resource(self) -> str:
        """``plural.group`` (``plural`` for the core group): the rule name of the type."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


@dataclass(frozen=True)
class TypeCheck:
    """One type's state, and both sides' resources once it is accepted."""

    ref: TypeRef
    state: str
    message: str
    upstream: Resource | None = None
    downstream: Resource | None = None

    def status_entry(self) -> Obj:
        """Its ``status.syncedResources[]`` entry."""
        return {
            "group": self.ref.group,
            "resource": self.ref.plural,
            "versions": [self.ref.version],
            "state": self.state,
            "message": self.message,
        }


def served(api: JsonApi, ref: TypeRef) -> Resource | None:
    """The resource as ``api``'s discovery describes it, or None when not served."""
    return find_resource(api, ref.group, ref.version, plural=ref.plural)


def _export_types(kcp: JsonApi, workspace_path: str, export: SupportedAPIExport) -> list[TypeRef]:
    """Every resource of an APIExport (from its latest schemas)."""
    path = export.path or (COMPUTE_PATH if export.export == "kubernetes" else workspace_path)
    workspace = JsonApi(for_cluster(kcp.api, path))
    found = workspace.get(f"/apis/apis.kcp.io/v1alpha1/apiexports/{export.export}")
    refs = []
    for name in (found.get("spec") or {}).get("latestResourceSchemas") or []:
        schema = workspace.get(f"/apis/apis.kcp.io/v1alpha1/apiresourceschemas/{name}")["spec"]
        version = storage_version(schema["versions"])["name"]
        refs.append(TypeRef(schema["group"], version, schema["names"]["plural"]))
    return refs


def _control_plane_group(group: str) -> bool:
    """kcp's own APIs and its agents' (``*.kcp.io``, e.g. SyncTarget as a CRD) are never workloads."""
    return group == "kcp.io" or group.endswith(".kcp.io")


def wanted_types(kcp: JsonApi, workspace_path: str, target: SyncTarget, defaults: list[str]) -> list[TypeRef]:
    """The types a SyncTarget syncs, in a stable order, each once."""
    refs = [TypeRef.parse(text) for text in defaults]
    for export in target.spec.supported_api_exports or []:
        if export.resource:
            refs.append(TypeRef.parse(export.resource))
        else:
            refs.extend(_export_types(kcp, workspace_path, export))
    crds = [crd for crd in kcp.get(CRDS).get("items") or [] if not _control_plane_group(crd["spec"]["group"])]
    if crds:
        refs.append(TypeRef(*CRD_TYPE))
    for crd in crds:
        spec = crd["spec"]
        version = storage_version(spec["versions"])["name"]
        refs.append(TypeRef(spec["group"], version, spec["names"]["plural"], from_crd=True))
    unique: dict[str, TypeRef] = {}
    for ref in refs:
        unique.setdefault(ref.group_resource, ref)
    return list(unique.values())


def check(kcp: JsonApi, physical: JsonApi, ref: TypeRef) -> TypeCheck:
    """Whether ``ref`` can sync: served in the workspace and by the physical cluster."""
    what = f"{ref.group or 'core'}/{ref.version} {ref.plural}"
    upstream = served(kcp, ref)
    if upstream is None:
        return TypeCheck(ref, "Pending", f"{what} is not served in the workspace (is its APIExport bound?)")
    downstream = served(physical, ref)
    if downstream is None:
        if ref.from_crd:
            return TypeCheck(ref, "Pending", f"waiting for the CRD of {what} in the physical cluster")
        return TypeCheck(ref, "Incompatible", f"the physical cluster does not serve {what}")
    if downstream.namespaced != upstream.namespaced:
        return TypeCheck(ref, "Incompatible", f"{what} is namespaced on one side only")
    verdict = _schemas_match(kcp, physical, ref)
    if verdict is not None and verdict.state != "Accepted":
        return TypeCheck(ref, "Incompatible", verdict.message)
    return TypeCheck(ref, "Accepted", f"{what} is served on both sides", upstream, downstream)


def _schemas_match(kcp: JsonApi, physical: JsonApi, ref: TypeRef) -> Verdict | None:
    """Whether the physical cluster's CRD of ``ref`` takes every value kcp's schema takes, as kcp judges
    it (None: no CRD serves it there — a built-in type, kube's own schema on both sides)."""
    offered = crd_spec(physical, ref.group, ref.plural)
    if offered is None:
        return None
    wanted = offered_spec(kcp, ref.group, ref.plural)
    return judge(wanted, offered, ref.group_resource) if wanted is not None else None
