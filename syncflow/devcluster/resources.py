"""Resource types the server serves: the built-in ones and those that CRDs add."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class ScaleSubresource:
    """Where a resource keeps its ``/scale`` fields (JSON paths like ``.spec.replicas``)."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None


class Converter(Protocol):
    """Converts objects of a multi-version type between a served version and the stored form."""

    def to_storage(self, obj: dict[str, Any], version: str) -> dict[str, Any]:
        """The stored form of ``obj``, sent at ``version``."""

    def from_storage(self, obj: dict[str, Any], version: str) -> dict[str, Any]:
        """``obj`` as served at ``version``."""


@dataclass(frozen=True)
class ResourceType:
    """One group/resource with the versions it is served at."""

    group: str
    versions: tuple[str, ...]
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_subresource: bool = False
    scale: ScaleSubresource | None = None
    tracks_generation: bool = False
    custom: bool = False
    # CRD data per version: openAPIV3Schema and additionalPrinterColumns.
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, hash=False)
    printer_columns: dict[str, list[dict[str, Any]]] = field(default_factory=dict, compare=False, hash=False)
    converter: Converter | None = field(default=None, compare=False, hash=False)

    @property
    def list_kind(self) -> str:
        """``<Kind>List``."""
        return self.kind + "List"

    @property
    def group_resource(self) -> str:
        """``plural.group`` (just ``plural`` for the core group)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def api_version(self, version: str) -> str:
        """``group/version`` or ``version`` for the core group."""
        return f"{self.group}/{version}" if self.group else version

    @property
    def verbs(self) -> list[str]:
        """Verbs announced in discovery."""
        return ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def _builtin(
    group: str,
    kind: str,
    plural: str,
    *,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    status: bool = False,
    scale: bool = False,
    generation: bool = False,
    version: str = "v1",
) -> ResourceType:
    return ResourceType(
        group=group,
        versions=(version,),
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        short_names=short,
        categories=categories,
        status_subresource=status,
        scale=ScaleSubresource(label_selector_path=".status.selector") if scale else None,
        tracks_generation=generation,
    )


BUILTIN_TYPES: tuple[ResourceType, ...] = (
    _builtin("", "Namespace", "namespaces", namespaced=False, short=("ns",), status=True),
    _builtin("", "ConfigMap", "configmaps", short=("cm",)),
    _builtin("", "Secret", "secrets"),
    _builtin("", "Service", "services", short=("svc",), categories=("all",), status=True),
    _builtin("", "ServiceAccount", "serviceaccounts", short=("sa",)),
    _builtin("", "Event", "events", short=("ev",)),
    _builtin("", "Pod", "pods", short=("po",), categories=("all",), status=True),
    _builtin("events.k8s.io", "Event", "events", short=("ev",)),
    _builtin(
        "apps",
        "Deployment",
        "deployments",
        short=("deploy",),
        categories=("all",),
        status=True,
        scale=True,
        generation=True,
    ),
    _builtin(
        "apps",
        "ReplicaSet",
        "replicasets",
        short=("rs",),
        categories=("all",),
        status=True,
        scale=True,
        generation=True,
    ),
    _builtin(
        "apps",
        "StatefulSet",
        "statefulsets",
        short=("sts",),
        categories=("all",),
        status=True,
        scale=True,
        generation=True,
    ),
    _builtin(
        "apps", "DaemonSet", "daemonsets", short=("ds",), categories=("all",), status=True, generation=True
    ),
    _builtin("batch", "Job", "jobs", categories=("all",), status=True, generation=True),
    _builtin("", "Node", "nodes", namespaced=False, short=("no",), status=True),
    _builtin("", "Endpoints", "endpoints", short=("ep",)),
    _builtin("discovery.k8s.io", "EndpointSlice", "endpointslices"),
    _builtin("coordination.k8s.io", "Lease", "leases"),
    _builtin(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        namespaced=False,
        short=("crd", "crds"),
        categories=("api-extensions",),
        status=True,
        generation=True,
    ),
    _builtin("rbac.authorization.k8s.io", "Role", "roles"),
    _builtin("rbac.authorization.k8s.io", "RoleBinding", "rolebindings"),
    _builtin("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", namespaced=False),
    _builtin("rbac.authorization.k8s.io", "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
)

# Group name -> preferred order of groups in discovery.
GROUP_ORDER = (
    "",
    "apps",
    "events.k8s.io",
    "batch",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "apiextensions.k8s.io",
    "rbac.authorization.k8s.io",
)


def crd_resource_type(crd: dict[str, Any]) -> ResourceType:
    """The resource type a (valid) CRD object serves."""
    spec = crd["spec"]
    names = spec["names"]
    served = [v for v in spec["versions"] if v.get("served", True)]
    storage_first = sorted(served, key=lambda v: not v.get("storage", False))
    scale: ScaleSubresource | None = None
    status = False
    for v in served:
        sub = v.get("subresources") or {}
        status = status or "status" in sub
        if "scale" in sub and scale is None:
            s = sub["scale"] or {}
            scale = ScaleSubresource(
                spec_replicas_path=s.get("specReplicasPath", ".spec.replicas"),
                status_replicas_path=s.get("statusReplicasPath", ".status.replicas"),
                label_selector_path=s.get("labelSelectorPath"),
            )
    return ResourceType(
        group=spec["group"],
        versions=tuple(v["name"] for v in storage_first),
        kind=names["kind"],
        plural=names["plural"],
        singular=names.get("singular") or names["kind"].lower(),
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        status_subresource=status,
        scale=scale,
        tracks_generation=True,
        custom=True,
        schemas={v["name"]: (v.get("schema") or {}).get("openAPIV3Schema") or {} for v in served},
        printer_columns={v["name"]: v.get("additionalPrinterColumns") or [] for v in served},
    )


def group_versions(types: Iterable[ResourceType]) -> dict[str, list[str]]:
    """Group -> served versions (preferred first), in discovery order."""
    groups: dict[str, list[str]] = {}
    for t in types:
        versions = groups.setdefault(t.group, [])
        versions.extend(v for v in t.versions if v not in versions)
    order = {g: i for i, g in enumerate(GROUP_ORDER)}
    return dict(sorted(groups.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
