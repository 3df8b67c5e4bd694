"""Publish mode's watcher for one leadership term: its control watches and the engine's sync manager.

Control watches: PublishedResources and CRDs on the service cluster (→ projection keys) and the
managed APIExport in kcp (→ the apiexport key). The sync manager publishes one rule per served
PublishedResource and runs its watches.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kubernetes.client import ApiClient

from syncflow.keys import ObjectKey
from syncflow.kube.bookmarks import Bookmarks
from syncflow.kube.clients import for_cluster
from syncflow.kube.refs import ObjectRef
from syncflow.kube.watch import ResourceWatch
from syncflow.logs import log_event
from syncflow.modes.publish import keys, source
from syncflow.modes.publish.clients import PublishEndpoints
from syncflow.modes.publish.endpoint import ExportEndpoint, resolve
from syncflow.modes.publish.reconcile import PUBLISHED_RESOURCES
from syncflow.modes.publish.rules import PublishRules
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.watches import Enqueue, KeyHandler, WatchSet

logger = logging.getLogger("syncflow.publish")


class PublishWatcher:
    """The watches of one agent during one leadership term."""

    def __init__(
        self,
        kcp: ApiClient,
        service: ApiClient,
        rules: PublishRules,
        endpoints: PublishEndpoints,
        manager: SyncManager,
        enqueue: Enqueue,
        bookmarks: Bookmarks,
        *,
        manager_interval: float = 2.0,
        watch_options: dict[str, Any] | None = None,
    ) -> None:
        self.kcp = kcp
        self.service = service
        self.rules = rules
        self.endpoints = endpoints
        self.manager = manager
        self.enqueue = enqueue
        self.bookmarks = bookmarks
        self.manager_interval = manager_interval
        self.watch_options = watch_options or {}
        self.control = WatchSet()
        self.wake = threading.Event()
        self._published: dict[str, dict[str, Any]] = {}

    @property
    def endpoint(self) -> ExportEndpoint | None:
        """The resolved APIExport (None until resolved)."""
        return self.rules.endpoint

    def _resolve(self) -> None:
        endpoint = resolve(self.kcp, self.endpoints.slice_ref)
        self.rules.endpoint = self.endpoints.endpoint = endpoint

    def run(self, stop: threading.Event) -> None:
        """Resolve the APIExport, start the control watches, then manage sync watches until stopped."""
        try:
            while self.endpoint is None and not stop.is_set():
                try:
                    self._resolve()
                except Exception as exc:  # keep trying: kcp may be down or the slice not there yet
                    log_event(
                        logger,
                        "publish.resolve_failed",
                        level=logging.WARNING,
                        endpointslice=self.endpoints.slice_ref,
                        error=f"{type(exc).__name__}: {exc}",
                    )
                    stop.wait(self.manager_interval)
            if self.endpoint is None:
                return
            self._start_control_watches(self.endpoint)
            while not stop.is_set():
                try:
                    self._resolve()
                    self.manager.reconcile()
                except Exception as exc:  # one failed pass must not end the manager
                    log_event(
                        logger,
                        "publish.manager_failed",
                        level=logging.WARNING,
                        error=f"{type(exc).__name__}: {exc}",
                    )
                self.wake.wait(self.manager_interval)
                self.wake.clear()
        finally:
            self.manager.stop_all()
            self.control.stop_all()

    def _watch(
        self, api: ApiClient, path: str, name: str, handler: KeyHandler, **options: Any
    ) -> ResourceWatch:
        return ResourceWatch(api, path, name, handler, self.bookmarks, **{**self.watch_options, **options})

    def _start_control_watches(self, endpoint: ExportEndpoint) -> None:
        export = keys.export_key(endpoint.export_cluster, endpoint.export_name)

        def published(type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
            if obj is not None:
                self._published[ref.name] = obj
            self.wake.set()
            return [keys.projection_key(ref.name), export]

        def crd(type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
            if obj is None:  # a relist of CRDs: re-project everything
                return [keys.projection_key(name) for name in self._published]
            spec = obj.get("spec") or {}
            served = (spec.get("group"), (spec.get("names") or {}).get("kind"))
            return [
                keys.projection_key(name) for name, pr in self._published.items() if _source_of(pr) == served
            ]

        self.control.start(
            "publishedresources",
            self._watch(
                self.service,
                PUBLISHED_RESOURCES,
                "service:publishedresources",
                KeyHandler(self.enqueue, published),
                label_selector=self.rules.selector,
            ),
        )
        self.control.start(
            "crds", self._watch(self.service, source.CRD_PATH, "service:crds", KeyHandler(self.enqueue, crd))
        )
        self.control.start(
            "apiexport",
            self._watch(
                for_cluster(self.kcp, endpoint.export_path),
                "/apis/apis.kcp.io/v1alpha1/apiexports",
                f"kcp:apiexport:{endpoint.export_name}",
                KeyHandler(self.enqueue, lambda type, obj, ref: [export]),
                field_selector=f"metadata.name={endpoint.export_name}",
            ),
        )

    def ready(self) -> tuple[bool, dict[str, Any]]:
        """Ready once the APIExport is resolved and every watch has listed and is connected."""
        control = self.control.statuses()
        sync_ready, details = self.manager.ready()
        ok = (
            self.endpoint is not None
            and sync_ready
            and all(s["synced"] and s["healthy"] for s in control.values())
        )
        return ok, {"watches": {**control, **details["watches"]}}


def _source_of(published: dict[str, Any]) -> tuple[str | None, str | None]:
    resource = (published.get("spec") or {}).get("resource") or {}
    return resource.get("apiGroup"), resource.get("kind")
