"""Edge mode's watcher for one leadership term: the mailbox's EdgeSyncConfigs, and the engine's sync
manager (one rule per downsynced and upsynced type)."""

from __future__ import annotations

from typing import Any

from kubernetes.client import ApiClient

from syncflow.kube.bookmarks import Bookmarks
from syncflow.kube.refs import ObjectRef
from syncflow.kube.watch import ResourceWatch
from syncflow.modes.edge.rules import EDGE_SYNC_CONFIGS
from syncflow.queue.keys import ObjectKey
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.watcher import TermWatcher
from syncflow.sync.watches import Enqueue, KeyHandler


class EdgeWatcher(TermWatcher):
    """Any EdgeSyncConfig change re-merges them (wakes the manager) and updates their status (``key``)."""

    def __init__(
        self, mailbox: ApiClient, manager: SyncManager, enqueue: Enqueue, bookmarks: Bookmarks, key: ObjectKey
    ) -> None:
        super().__init__(manager)
        self.mailbox = mailbox
        self.enqueue = enqueue
        self.bookmarks = bookmarks
        self.key = key

    def _changed(self, type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
        self.wake.set()
        return [self.key]

    def control_watches(self) -> dict[str, ResourceWatch]:
        """The EdgeSyncConfigs of the mailbox."""
        return {
            "edgesyncconfigs": ResourceWatch(
                self.mailbox,
                EDGE_SYNC_CONFIGS,
                "kcp:edgesyncconfigs",
                KeyHandler(self.enqueue, self._changed),
                self.bookmarks,
            )
        }
