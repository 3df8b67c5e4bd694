"""Publish mode's watcher for one leadership term: its control watches and the engine's sync manager.

Control watches: PublishedResources and CRDs on the service cluster (→ projection keys) and the
managed APIExport in kcp (→ the apiexport key). The sync manager publishes one rule per served
PublishedResource and runs its watches; each pass first re-resolves the endpoint slice, so a new
virtual workspace URL is picked up.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kubernetes.client import ApiClient

from syncflow.kube import schemas
from syncflow.kube.bookmarks import Bookmarks
from syncflow.kube.clients import for_cluster, for_url
from syncflow.kube.refs import ObjectRef
from syncflow.kube.watch import ResourceWatch
from syncflow.metrics import record as metrics
from syncflow.modes.publish import keys
from syncflow.modes.publish.clients import PublishEndpoints
from syncflow.modes.publish.endpoint import ExportEndpoint, resolve
from syncflow.modes.publish.reconcile import PUBLISHED_RESOURCES
from syncflow.modes.publish.rules import KCP, SERVICE, PublishRules
from syncflow.queue.keys import ObjectKey
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.watcher import TermWatcher
from syncflow.sync.watches import Enqueue, KeyHandler
from syncflow.sync.worker import FORBIDDEN
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.publish")

BINDINGS = "/apis/apis.kcp.io/v1alpha1/apibindings"


class PublishWatcher(TermWatcher):
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
        interval: float = 2.0,
    ) -> None:
        super().__init__(manager, interval=interval)
        self.kcp = kcp
        self.service = service
        self.rules = rules
        self.endpoints = endpoints
        self.enqueue = enqueue
        self.bookmarks = bookmarks
        self._published: dict[str, dict[str, Any]] = {}

    @property
    def endpoint(self) -> ExportEndpoint | None:
        """The resolved APIExport (None until resolved)."""
        return self.rules.endpoint

    def before_pass(self) -> None:
        """Resolve the endpoint slice (its virtual workspace URLs change as bindings come and go), and
        watch the APIBindings each virtual workspace shows."""
        endpoint = resolve(self.kcp, self.endpoints.slice_ref)
        self.rules.endpoint = self.endpoints.endpoint = endpoint
        if self.prepared:
            for url in endpoint.urls:
                self.control.start(f"apibindings:{url}", self._bindings_watch(url))

    def _bindings_watch(self, url: str) -> ResourceWatch:
        """A binding that changes (e.g. accepts a permission claim) retries the keys its workspace refused."""
        replay = self.manager.replay

        def changed(type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
            if replay is not None and obj is not None:
                replay(f"{FORBIDDEN}{ref.cluster}")
            return []

        return self._watch(
            for_url(self.kcp, f"{url}/clusters/*"),
            BINDINGS,
            f"kcp:apibindings:{url}",
            KeyHandler(self.enqueue, changed),
            endpoint=KCP,
        )

    def prepare(self, stop: threading.Event) -> bool:
        """Resolve the APIExport, retrying until it works (kcp may be down or the slice not there yet)."""
        while not stop.is_set():
            try:
                self.before_pass()
                return True
            except Exception as exc:
                log_event(
                    logger,
                    "publish.resolve_failed",
                    level=logging.WARNING,
                    endpointslice=self.endpoints.slice_ref,
                    error=f"{type(exc).__name__}: {exc}",
                )
                stop.wait(self.interval)
        return False

    def run(self, stop: threading.Event) -> None:
        """The term; when it ends, another replica manages the PublishedResources."""
        try:
            super().run(stop)
        finally:
            metrics.published_resources(0)

    def _watch(
        self, api: ApiClient, path: str, name: str, handler: KeyHandler, **options: Any
    ) -> ResourceWatch:
        return ResourceWatch(api, path, name, handler, self.bookmarks, **options)

    def control_watches(self) -> dict[str, ResourceWatch]:
        """PublishedResources and CRDs (→ projection), the APIExport (→ apiexport)."""
        assert self.endpoint is not None
        endpoint = self.endpoint
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

        return {
            "publishedresources": self._watch(
                self.service,
                PUBLISHED_RESOURCES,
                "service:publishedresources",
                KeyHandler(self.enqueue, published),
                label_selector=self.rules.selector,
                endpoint=SERVICE,
            ),
            "crds": self._watch(
                self.service,
                schemas.CRD_PATH,
                "service:crds",
                KeyHandler(self.enqueue, crd),
                endpoint=SERVICE,
            ),
            "apiexport": self._watch(
                for_cluster(self.kcp, endpoint.export_path),
                "/apis/apis.kcp.io/v1alpha1/apiexports",
                f"kcp:apiexport:{endpoint.export_name}",
                KeyHandler(self.enqueue, lambda type, obj, ref: [export]),
                field_selector=f"metadata.name={endpoint.export_name}",
                endpoint=KCP,
            ),
        }


def _source_of(published: dict[str, Any]) -> tuple[str | None, str | None]:
    resource = (published.get("spec") or {}).get("resource") or {}
    return resource.get("apiGroup"), resource.get("kind")
