"""``root:compute``: the workspace kcp v0.11 creates at start to export Kubernetes' workload types.

Its APIExport ``kubernetes`` carries APIResourceSchemas of Deployments, Services, Ingresses and Pods
(Kubernetes 1.24), so a workspace that binds ``root:compute:kubernetes`` can create them (a workspace
on its own serves none of them). The objects come from ``kube-1.24.json``, derived from kcp's
``config/rootcompute`` by :mod:`.generate`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from syncflow.devcluster.crud import Objects, Target
from syncflow.devcluster.kcp.tenancy import ROOT, Tenancy
from syncflow.devcluster.registry import Registry
from syncflow.util.jsonvalues import deep_copy

DATA_FILE = "kube-1.24.json"
PATH = "root:compute"
EXPORT = "kubernetes"


@cache
def manifests() -> dict[str, Any]:
    """The ``compute`` Workspace and the objects kcp creates in it."""
    data: dict[str, Any] = json.loads(resources.files(__package__).joinpath(DATA_FILE).read_text())
    return data


def _create(objects: Objects, registry: Registry, cluster: str, manifest: dict[str, Any]) -> None:
    group, _, version = manifest["apiVersion"].rpartition("/")
    rtype = next(t for t in registry.types(cluster) if (t.group, t.kind) == (group, manifest["kind"]))
    body = {k: v for k, v in deep_copy(manifest).items() if k not in ("apiVersion", "kind")}
    objects.create(Target(cluster, rtype, version), "", body)


def bootstrap(objects: Objects, registry: Registry, tenancy: Tenancy) -> str:
    """Create ``root:compute`` and its ``kubernetes`` APIExport; returns the logical-cluster name."""
    data = manifests()
    _create(objects, registry, ROOT, data["workspace"])
    cluster = tenancy.resolve(PATH)
    assert cluster is not None
    for manifest in data["objects"]:
        _create(objects, registry, cluster, manifest)
    return cluster
