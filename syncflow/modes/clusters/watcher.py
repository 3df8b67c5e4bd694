"""Clusters mode's watcher for one leadership term: the Clusters, the objects of every synced type in
the workspace, and the engine's sync manager (one rule per Cluster and type).

A Cluster's new spec (or a new Cluster) gets its ``cluster/…`` key; a change of its readiness or of
the Deployments verdict gets every type's ``crd/…`` key and a ``rebalance`` of the split roots. An
object labelled for a Cluster that does not sync now gets a ``waiting/…`` key; a Deployment event
gets the ``split/…`` key of its root. A syncer of one cluster (``--only-cluster``) watches only the
Clusters (only its own): the control work is the central syncflow's.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client import ApiClient

from syncflow.api.cluster import PATH
from syncflow.api.conditions import find
from syncflow.kube.bookmarks import Bookmarks
from syncflow.kube.refs import ObjectRef
from syncflow.kube.watch import ResourceWatch
from syncflow.modes.clusters.identity import CLUSTER_LABEL, DEPLOYMENTS, SyncedType
from syncflow.modes.clusters.rules import ClustersRules
from syncflow.modes.clusters.splitter import controller_of, split_key
from syncflow.queue.keys import ObjectKey
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.watcher import TermWatcher
from syncflow.sync.watches import RESYNC, Enqueue, KeyHandler

Obj = dict[str, Any]


def cluster_key(workspace: str, name: str) -> ObjectKey:
    """``cluster/clusters/<workspace>//<name>``: probe and record one Cluster."""
    return ObjectKey("cluster", "clusters", workspace, "", name)


def crd_key(workspace: str, t: SyncedType) -> ObjectKey:
    """``crd/<type>/<workspace>//<type>``: negotiate one type's schema across the clusters."""
    return ObjectKey("crd", t.group_resource, workspace, "", t.group_resource)


def rebalance_key(workspace: str) -> ObjectKey:
    """``rebalance/deployments.apps/<workspace>//all``: split every root again."""
    return ObjectKey("rebalance", DEPLOYMENTS.group_resource, workspace, "", "all")


def _readiness(obj: Obj | None) -> tuple[str, str]:
    status = (obj or {}).get("status") or {}
    ready = (find(status.get("conditions"), "Ready") or {}).get("status", "")
    return ready, str((DEPLOYMENTS.entry(status.get("syncedResources")) or {}).get("state", ""))


class ClustersWatcher(TermWatcher):
    """The Clusters and (centrally) every synced type's objects, then the sync manager."""

    def __init__(
        self,
        kcp: ApiClient,
        rules: ClustersRules,
        manager: SyncManager,
        enqueue: Enqueue,
        bookmarks: Bookmarks,
        *,
        central: bool,
    ) -> None:
        super().__init__(manager)
        self.kcp = kcp
        self.rules = rules
        self.enqueue = enqueue
        self.bookmarks = bookmarks
        self.central = central
        self._seen: dict[str, tuple[Any, tuple[str, str]]] = {}

    @property
    def workspace(self) -> str:
        """The logical cluster of the workspace."""
        return self.rules.workspace

    def _cluster_changed(self, type: str, obj: Obj | None, ref: ObjectRef) -> list[ObjectKey]:
        self.wake.set()
        if not self.central:
            return []
        keys: list[ObjectKey] = []
        generation = (obj or {}).get("metadata", {}).get("generation")
        readiness = _readiness(obj) if type != "DELETED" else ("gone", "")
        seen = self._seen.get(ref.name)
        if type == RESYNC or seen is None or seen[0] != generation:
            keys.append(cluster_key(self.workspace, ref.name))
        if type == RESYNC or seen is None or seen[1] != readiness:
            keys += [crd_key(self.workspace, t) for t in self.rules.types]
            keys.append(rebalance_key(self.workspace))
        if type == "DELETED":
            self._seen.pop(ref.name, None)
        elif obj is not None:
            self._seen[ref.name] = (generation, readiness)
        return list(dict.fromkeys(keys))

    def _objects_changed(self, t: SyncedType) -> KeyHandler:
        def keys(type: str, obj: Obj | None, ref: ObjectRef) -> list[ObjectKey]:
            found: list[ObjectKey] = []
            cluster = ((obj or {}).get("metadata", {}).get("labels") or {}).get(CLUSTER_LABEL)
            if cluster and type != "DELETED" and t.rule_name(cluster) not in self.rules.serving:
                found.append(ObjectKey("waiting", t.group_resource, self.workspace, ref.namespace, ref.name))
            if t == DEPLOYMENTS:
                root = ref.name if obj is None or not cluster else controller_of(obj)
                if root:
                    found.append(split_key(self.workspace, ref.namespace, root))
            return found

        return KeyHandler(self.enqueue, keys)

    def control_watches(self) -> dict[str, ResourceWatch]:
        """The Clusters."""
        handler = KeyHandler(self.enqueue, self._cluster_changed)
        watch = ResourceWatch(
            self.kcp,
            PATH,
            "kcp:clusters",
            handler,
            self.bookmarks,
            field_selector=self.rules.cluster_selector,
        )
        return {"clusters": watch}

    def before_pass(self) -> None:
        """Start the object watch of each synced type once kcp serves it (central syncflow only)."""
        if not self.central:
            return
        for t in self.rules.types:
            name = f"kcp:objects:{t.group_resource}"
            if name in self.control.watches:
                continue
            version = self.rules.preferred_version(t)
            resource = self.rules.resource(t, version) if version else None
            if resource is not None:
                watch = ResourceWatch(
                    self.kcp, resource.path(), name, self._objects_changed(t), self.bookmarks
                )
                self.control.start(name, watch)
