"""Workspaces and logical clusters: creating a Workspace creates its logical cluster.

Every logical cluster has a ``LogicalCluster`` named ``cluster`` (with ``kcp.io/path``, except in
root) and a ``default`` namespace. Clusters are addressed by name or by path (``root:org:team``).
"""

from __future__ import annotations

from collections.abc import Callable

from syncflow.devcluster import errors
from syncflow.devcluster.crud import Objects, Target, now_rfc3339
from syncflow.devcluster.errors import FieldError
from syncflow.devcluster.kcp.hashes import PATH_ANNOTATION, random_cluster_name
from syncflow.devcluster.kcp.types import CORE, TENANCY
from syncflow.devcluster.lifecycle import Lifecycle
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.store import Obj
from syncflow.util import names
from syncflow.util.jsonvalues import deep_copy

ROOT = "root"
LOGICAL_CLUSTER_NAME = "cluster"
_TYPE_ANNOTATION = "internal.tenancy.kcp.io/type"


def _is_workspace(t: Target) -> bool:
    return (t.rtype.group, t.rtype.plural) == (TENANCY, "workspaces")


class Tenancy:
    """Keeps logical clusters in step with Workspace objects and resolves names and paths."""

    def __init__(
        self, objects: Objects, lifecycle: Lifecycle, registry: Registry, base_url: Callable[[], str]
    ) -> None:
        self.objects = objects
        self.lifecycle = lifecycle
        self.registry = registry
        self.base_url = base_url
        self._path_to_cluster: dict[str, str] = {}
        self._cluster_to_path: dict[str, str] = {}
        objects.admission.append(self._admit)
        objects.on_write.append(self._after_write)
        objects.on_remove.append(self._after_remove)

    def bootstrap(self) -> None:
        """Create the root workspace's logical cluster."""
        self._create_cluster(ROOT, ROOT, owner=None, owner_cluster="")

    def resolve(self, name_or_path: str) -> str | None:
        """The logical-cluster name of a name or path, if it exists."""
        if name_or_path in self._cluster_to_path:
            return name_or_path
        return self._path_to_cluster.get(name_or_path)

    def path_of(self, cluster: str) -> str:
        """The canonical path of a logical cluster."""
        return self._cluster_to_path[cluster]

    def clusters(self) -> list[str]:
        """Every logical cluster."""
        return list(self._cluster_to_path)

    def _target(self, cluster: str, group: str, plural: str) -> Target:
        rtype = self.registry.by_group_resource(cluster, group, plural)
        assert rtype is not None
        return Target(cluster, rtype, rtype.versions[0])

    def _create_cluster(self, cluster: str, path: str, owner: Obj | None, owner_cluster: str) -> None:
        self._path_to_cluster[path] = cluster
        self._cluster_to_path[cluster] = path
        self.lifecycle.create_cluster(cluster, ("default",))
        annotations = {_TYPE_ANNOTATION: "root:root" if owner is None else "root:universal"}
        if owner is not None:
            annotations[PATH_ANNOTATION] = path
        body: Obj = {"metadata": {"name": LOGICAL_CLUSTER_NAME, "annotations": annotations}, "spec": {}}
        if owner is not None:
            body["spec"]["owner"] = {
                "apiVersion": f"{TENANCY}/v1alpha1",
                "resource": "workspaces",
                "name": owner["metadata"]["name"],
                "cluster": owner_cluster,
                "uid": owner["metadata"]["uid"],
            }
        t = self._target(cluster, CORE, "logicalclusters")
        created = self.objects.create(t, "", body)
        ready = deep_copy(created)
        ready["status"] = {"phase": "Ready", "URL": f"{self.base_url()}/clusters/{cluster}"}
        self.objects.replace(t, created, ready, "status")

    def _admit(self, t: Target, new: Obj, old: Obj | None) -> None:
        if not _is_workspace(t):
            return
        spec = new.setdefault("spec", {})
        if old is None:
            problems = names.dns1123_label(new["metadata"].get("name", ""))
            if problems:
                raise errors.invalid(
                    "Workspace",
                    new["metadata"].get("name", ""),
                    [
                        FieldError(
                            "metadata.name",
                            "FieldValueInvalid",
                            f'Invalid value: "{new["metadata"].get("name", "")}": {problems[0]}',
                        )
                    ],
                    TENANCY,
                )
            spec.setdefault("type", {"name": "universal", "path": ROOT})
            spec.pop("cluster", None)
            spec.pop("URL", None)
        else:
            for field in ("cluster", "URL", "type"):
                if field in old.get("spec", {}):
                    spec[field] = old["spec"][field]

    def _after_write(self, t: Target, new: Obj, old: Obj | None) -> None:
        if not _is_workspace(t) or new.get("spec", {}).get("cluster"):
            return
        parent_path = self._cluster_to_path[t.cluster]
        path = f"{parent_path}:{new['metadata']['name']}"
        cluster = random_cluster_name()
        self._create_cluster(cluster, path, owner=new, owner_cluster=t.cluster)
        scheduled = deep_copy(new)
        scheduled["spec"]["cluster"] = cluster
        scheduled["spec"]["URL"] = f"{self.base_url()}/clusters/{path}"
        stored = self.objects.replace(t, new, scheduled)
        ready = deep_copy(stored)
        now = now_rfc3339()
        ready["status"] = {
            "phase": "Ready",
            "conditions": [
                {"type": kind, "status": "True", "lastTransitionTime": now}
                for kind in ("WorkspaceScheduled", "WorkspaceInitialized", "APIBindingsInitialized")
            ],
        }
        self.objects.replace(t, stored, ready, "status")

    def _after_remove(self, t: Target, obj: Obj) -> None:
        cluster = obj.get("spec", {}).get("cluster")
        if _is_workspace(t) and cluster in self._cluster_to_path:
            self._drop_cluster(cluster)

    def _drop_cluster(self, cluster: str) -> None:
        """Remove a logical cluster with everything in it (and the workspaces below it)."""
        for rtype in list(self.registry.types(cluster)):
            for _, obj in list(self.objects.store.items(cluster, rtype.group, rtype.plural)):
                if (rtype.group, rtype.plural) == (TENANCY, "workspaces"):
                    child = obj.get("spec", {}).get("cluster")
                    if child in self._cluster_to_path:
                        self._drop_cluster(child)
                self.objects.store.remove(cluster, rtype.group, rtype.plural, obj)
            if rtype.custom:
                self.registry.unregister(cluster, rtype.group, rtype.plural)
                self.objects.store.end_watches(cluster, rtype.group, rtype.plural)
        path = self._cluster_to_path.pop(cluster)
        self._path_to_cluster.pop(path, None)
