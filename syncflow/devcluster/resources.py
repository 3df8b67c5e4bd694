"""Resource types the server serves: the built-in ones and those that CRDs add."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any, Protocol

DEFAULT_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SERVED_SUBRESOURCES = frozenset({"status", "scale", "finalize", "token", "eviction", "binding"})
"""Subresources devcluster implements; the catalogue's others (log, exec, resize, …) are not served."""


@dataclass(frozen=True)
class ScaleSubresource:
    """Where a resource keeps its ``/scale`` fields (JSON paths like ``.spec.replicas``)."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None


@dataclass(frozen=True)
class Subresource:
    """A subresource other than status and scale, as discovery announces it.

    ``group``/``version``/``kind`` name the body it takes when that is not the parent's kind.
    """

    name: str
    verbs: tuple[str, ...]
    group: str = ""
    version: str = ""
    kind: str = ""


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
    verbs: tuple[str, ...] = DEFAULT_VERBS
    subresources: tuple[Subresource, ...] = ()
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

    def has_subresource(self, name: str) -> bool:
        """Whether ``<plural>/<name>`` is served."""
        if name == "status":
            return self.status_subresource
        if name == "scale":
            return self.scale is not None
        return any(s.name == name for s in self.subresources)


def _subresource(name: str, info: dict[str, Any]) -> Subresource:
    return Subresource(
        name, tuple(info["verbs"]), info.get("group", ""), info.get("version", ""), info.get("kind", "")
    )


def _catalogue_type(entry: dict[str, Any]) -> ResourceType:
    subresources = entry["subresources"]
    return ResourceType(
        group=entry["group"],
        versions=tuple(entry["versions"]),
        kind=entry["kind"],
        plural=entry["plural"],
        singular=entry["kind"].lower(),
        namespaced=entry["namespaced"],
        short_names=tuple(entry["shortNames"]),
        categories=tuple(entry["categories"]),
        status_subresource="status" in subresources,
        scale=ScaleSubresource(label_selector_path=".status.selector") if "scale" in subresources else None,
        tracks_generation=entry["generation"],
        verbs=tuple(entry["verbs"]),
        subresources=tuple(
            _subresource(name, info)
            for name, info in subresources.items()
            if name in SERVED_SUBRESOURCES and name not in ("status", "scale")
        ),
    )


def _load_builtin_types() -> tuple[ResourceType, ...]:
    """Kubernetes 1.32's built-in types, from the catalogue (see builtins/generate.py)."""
    entries = json.loads(files("syncflow.devcluster.builtins").joinpath("catalogue.json").read_text())
    return tuple(_catalogue_type(entry) for entry in entries)


BUILTIN_TYPES: tuple[ResourceType, ...] = _load_builtin_types()

# The order of groups in discovery: kube-apiserver's (the core group first), then the rest by name.
GROUP_ORDER = (
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
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
