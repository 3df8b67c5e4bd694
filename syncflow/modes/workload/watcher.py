"""Workload mode's watcher for one leadership term: the SyncTarget and the workspace's CRDs, and the
engine's sync manager (one rule per Accepted type)."""

from __future__ import annotations

from typing import Any

from kubernetes.client import ApiClient

from syncflow.kube.bookmarks import Bookmarks
from syncflow.kube.refs import ObjectRef
from syncflow.kube.watch import ResourceWatch
from syncflow.modes.workload import discovery, target
from syncflow.modes.workload.rules import Workspace
from syncflow.queue.keys import ObjectKey
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.watcher import TermWatcher
from syncflow.sync.watches import Enqueue, KeyHandler


class WorkloadWatcher(TermWatcher):
    """A SyncTarget change or a workspace CRD change re-checks the types (``keys``) and wakes the manager."""

    def __init__(
        self,
        workspace_api: ApiClient,
        workspace: Workspace,
        manager: SyncManager,
        enqueue: Enqueue,
        bookmarks: Bookmarks,
        keys: list[ObjectKey],
    ) -> None:
        super().__init__(manager)
        self.workspace_api = workspace_api
        self.workspace = workspace
        self.enqueue = enqueue
        self.bookmarks = bookmarks
        self.keys = keys
        self._generation: int | None = None

    def _sync_target_changed(self, type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
        """Any change may move ``status.syncedResources`` (wake the manager); only a new spec (generation)
        or a deletion changes which types to check — heartbeats change the status every period."""
        self.wake.set()
        meta = (obj or {}).get("metadata", {})
        generation = meta.get("generation")
        if obj is not None and generation == self._generation and not meta.get("deletionTimestamp"):
            return []
        self._generation = generation
        return self.keys

    def _crd_changed(self, type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
        return self.keys

    def control_watches(self) -> dict[str, ResourceWatch]:
        """The SyncTarget and the workspace's CRDs."""
        name = self.workspace.sync_target
        return {
            "synctarget": ResourceWatch(
                self.workspace_api,
                target.SYNC_TARGETS,
                f"kcp:synctarget:{name}",
                KeyHandler(self.enqueue, self._sync_target_changed),
                self.bookmarks,
                field_selector=f"metadata.name={name}",
                endpoint=target.KCP,
            ),
            "crds": ResourceWatch(
                self.workspace_api,
                discovery.CRDS,
                "kcp:crds",
                KeyHandler(self.enqueue, self._crd_changed),
                self.bookmarks,
                endpoint=target.KCP,
            ),
        }
