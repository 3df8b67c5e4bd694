"""``syncflow watch`` in publish mode: watch both sides and enqueue keys; never write objects.

While leading it runs:
- control watches: PublishedResources and CRDs (service cluster) → ``projection`` keys, and the
  APIExport (kcp) → the ``apiexport`` key;
- the sync manager: for every PublishedResource with a ready schema and sync enabled whose
  projected resource is discoverable through the virtual workspace, a list+watch of that resource
  across all workspaces (``/clusters/*``) and of its local copies → ``sync`` keys. Watches start and
  stop as PublishedResources come, change and go.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from syncflow.keys import ObjectKey
from syncflow.kube.bookmarks import Bookmarks
from syncflow.kube.clients import for_cluster, for_url
from syncflow.kube.jsonapi import JsonApi, resource_path
from syncflow.kube.refs import ObjectRef
from syncflow.kube.watch import ResourceWatch
from syncflow.logs import log_event
from syncflow.modes.publish import keys, source
from syncflow.modes.publish.endpoint import ExportEndpoint, resolve
from syncflow.modes.publish.reconcile import PUBLISHED_RESOURCES, SCHEMAS
from syncflow.sync.echoes import OwnWrites
from syncflow.sync.metadata import AGENT_LABEL

logger = logging.getLogger("syncflow.publish")

Enqueue = Callable[[Iterable[ObjectKey], bool], None]
"""Adds keys to the work queue; the flag says bulk (relists) rather than events."""


KeysFor = Callable[[str, dict[str, Any] | None, ObjectRef], list[ObjectKey]]
"""Maps (event type or ``RESYNC``, object or None on resync, ref) to the keys to enqueue."""


class KeyHandler:
    """A watch handler that turns events and resyncs into keys."""

    def __init__(self, enqueue: Enqueue, keys_for: KeysFor):
        self.enqueue = enqueue
        self.keys_for = keys_for

    def on_event(self, type: str, obj: dict[str, Any], ref: ObjectRef) -> None:
        """An event enqueues its keys at event priority."""
        self.enqueue(self.keys_for(type, obj, ref), False)

    def on_resync(self, refs: set[ObjectRef]) -> None:
        """A (re)list enqueues every key in bulk."""
        self.enqueue([key for ref in sorted(refs) for key in self.keys_for("RESYNC", None, ref)], True)


@dataclass(frozen=True)
class SyncSpec:
    """What one PublishedResource's sync watches cover."""

    published: str
    kcp_path: str  # list path of the projected resource in kcp
    local_path: str  # list path of the local copies


class WatchSet:
    """Named watches, each on its own thread with its own stop event."""

    def __init__(self) -> None:
        self.watches: dict[str, tuple[ResourceWatch, threading.Event, threading.Thread]] = {}

    def start(self, name: str, watch: ResourceWatch) -> None:
        """Run ``watch`` until stopped (no-op if a watch of that name runs)."""
        if name in self.watches:
            return
        stop = threading.Event()
        thread = threading.Thread(target=watch.run, args=(stop,), name=f"watch:{name}", daemon=True)
        self.watches[name] = (watch, stop, thread)
        thread.start()
        log_event(logger, "watch.started", watch=name)

    def stop(self, name: str) -> None:
        """Stop one watch and wait for its thread."""
        _, stop, thread = self.watches.pop(name)
        stop.set()
        thread.join(timeout=30)
        log_event(logger, "watch.stopped", watch=name)

    def stop_all(self) -> None:
        """Stop every watch."""
        for name in list(self.watches):
            self.stop(name)

    def statuses(self) -> dict[str, dict[str, Any]]:
        """Readiness of every watch, by name."""
        return {
            name: {"synced": w.status.synced, "healthy": w.status.healthy, "error": w.status.last_error}
            for name, (w, _, _) in self.watches.items()
        }


class PublishWatcher:
    """The watches of one agent during one leadership term."""

    def __init__(
        self,
        service: ApiClient,
        kcp: ApiClient,
        slice_ref: str,
        agent_name: str,
        selector: str,
        bookmarks: Bookmarks,
        enqueue: Enqueue,
        *,
        manager_interval: float = 2.0,
        watch_options: dict[str, Any] | None = None,
        echoes: OwnWrites | None = None,
    ) -> None:
        self.service = service
        self.service_json = JsonApi(service)
        self.kcp = kcp
        self.slice_ref = slice_ref
        self.agent_name = agent_name
        self.selector = selector
        self.bookmarks = bookmarks
        self.enqueue = enqueue
        self.manager_interval = manager_interval
        self.watch_options = watch_options or {}
        self.echoes = echoes
        self.watches = WatchSet()
        self.wake = threading.Event()
        self.endpoint: ExportEndpoint | None = None
        self._published: dict[str, dict[str, Any]] = {}
        self._announced: set[str] = set()
        self._specs: dict[str, tuple[str, SyncSpec]] = {}

    # ----- running -----

    def run(self, stop: threading.Event) -> None:
        """Resolve the APIExport, start the control watches, then manage sync watches until stopped."""
        try:
            while self.endpoint is None and not stop.is_set():
                try:
                    self.endpoint = resolve(self.kcp, self.slice_ref)
                except Exception as exc:  # keep trying: kcp may be down or the slice not there yet
                    log_event(
                        logger,
                        "publish.resolve_failed",
                        level=logging.WARNING,
                        endpointslice=self.slice_ref,
                        error=f"{type(exc).__name__}: {exc}",
                    )
                    stop.wait(self.manager_interval)
            if self.endpoint is None:
                return
            self._start_control_watches(self.endpoint)
            while not stop.is_set():
                try:
                    self._manage_sync_watches()
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
            self.watches.stop_all()

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

        self.watches.start(
            "publishedresources",
            self._watch(
                self.service,
                PUBLISHED_RESOURCES,
                "service:publishedresources",
                KeyHandler(self.enqueue, published),
                label_selector=self.selector,
            ),
        )
        self.watches.start(
            "crds", self._watch(self.service, source.CRD_PATH, "service:crds", KeyHandler(self.enqueue, crd))
        )
        self.watches.start(
            "apiexport",
            self._watch(
                for_cluster(self.kcp, endpoint.export_path),
                "/apis/apis.kcp.io/v1alpha1/apiexports",
                f"kcp:apiexport:{endpoint.export_name}",
                KeyHandler(self.enqueue, lambda type, obj, ref: [export]),
                field_selector=f"metadata.name={endpoint.export_name}",
            ),
        )

    # ----- sync manager -----

    def _manage_sync_watches(self) -> None:
        endpoint = resolve(self.kcp, self.slice_ref)
        self.endpoint = endpoint
        query = {"labelSelector": self.selector} if self.selector else {}
        items = self.service_json.get(PUBLISHED_RESOURCES, **query).get("items") or []
        self._published = {obj["metadata"]["name"]: obj for obj in items}
        wanted: dict[str, tuple[SyncSpec, str]] = {}
        for obj in items:
            spec = self._cached_sync_spec(obj, endpoint)
            if spec is not None:
                for url in endpoint.urls:
                    wanted[f"sync:{spec.published}:{url}"] = (spec, url)
        for name in [n for n in self.watches.watches if n.startswith("sync:") and n not in wanted]:
            self.watches.stop(name)
            self.watches.stop(name.replace("sync:", "local:", 1))
        for name, (spec, url) in wanted.items():
            if name not in self.watches.watches:
                self._start_sync_watches(name, spec, url)

    def _cached_sync_spec(self, obj: dict[str, Any], endpoint: ExportEndpoint) -> SyncSpec | None:
        """The sync spec of a PublishedResource, recomputed only when it changed (a new schema is a
        change of its status) or when it was not ready at the last pass."""
        name, version = obj["metadata"]["name"], obj["metadata"].get("resourceVersion", "")
        cached = self._specs.get(name)
        if cached is not None and cached[0] == version and endpoint.urls:
            return cached[1]
        spec = self._sync_spec(obj, endpoint)
        if spec is None:
            self._specs.pop(name, None)
        else:
            self._specs[name] = (version, spec)
        return spec

    def _sync_spec(self, obj: dict[str, Any], endpoint: ExportEndpoint) -> SyncSpec | None:
        """The sync watches a PublishedResource needs now, or None (not ready, disabled, deleting)."""
        name = obj["metadata"]["name"]
        status, spec = obj.get("status") or {}, obj.get("spec") or {}
        schema_name = status.get("resourceSchemaName")
        enabled = (spec.get("synchronization") or {}).get("enabled", True)
        if not schema_name or not enabled or obj["metadata"].get("deletionTimestamp"):
            return None
        if not endpoint.urls:
            self._announce(
                name, "waiting for the virtual workspace URL: no workspace binds the APIExport yet"
            )
            return None
        try:
            schema = JsonApi(for_cluster(self.kcp, endpoint.export_path)).get(f"{SCHEMAS}/{schema_name}")
            resource = spec.get("resource") or {}
            crds = self.service_json.get(source.CRD_PATH)["items"]
            local, _ = source.source_spec(
                self.service_json, resource.get("apiGroup", ""), resource.get("kind", ""), crds
            )
        except Exception as exc:
            self._announce(name, f"not syncing yet: {type(exc).__name__}: {exc}")
            return None
        kcp_group, kcp_plural = schema["spec"]["group"], schema["spec"]["names"]["plural"]
        kcp_version = _storage_version(schema["spec"]["versions"])
        if not self._discoverable(endpoint.urls, kcp_group, kcp_version, kcp_plural):
            self._announce(
                name, f"{kcp_plural}.{kcp_group}/{kcp_version} is not served by the virtual workspace yet"
            )
            return None
        self._announced.discard(name)
        return SyncSpec(
            published=name,
            kcp_path=resource_path(kcp_group, kcp_version, kcp_plural),
            local_path=resource_path(
                local["group"], _storage_version(local["versions"]), local["names"]["plural"]
            ),
        )

    def _discoverable(self, urls: tuple[str, ...], group: str, version: str, plural: str) -> bool:
        for url in urls:
            try:
                listing = JsonApi(for_url(self.kcp, f"{url}/clusters/*")).get(
                    f"/apis/{group}/{version}" if group else f"/api/{version}"
                )
            except ApiException:
                return False
            if plural not in {r["name"] for r in listing.get("resources") or []}:
                return False
        return True

    def _announce(self, published: str, message: str) -> None:
        if published not in self._announced:
            self._announced.add(published)
            log_event(logger, "publish.sync_waiting", publishedresource=published, reason=message)

    def _own(self, side: str) -> Callable[[ObjectRef, str], bool] | None:
        """The echo filter of one side: our own writes are not enqueued again."""
        echoes = self.echoes
        if echoes is None:
            return None
        return lambda ref, rv: echoes.is_own(side, ref, rv)

    def _start_sync_watches(self, name: str, spec: SyncSpec, url: str) -> None:
        def remote(type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
            return [keys.sync_key(spec.published, ref)]

        def local(type: str, obj: dict[str, Any] | None, ref: ObjectRef) -> list[ObjectKey]:
            owner = keys.remote_ref(obj) if obj is not None else None
            if owner is None:
                return []
            # a deleted copy is re-created by a sync; any other change may carry a new status
            make = keys.sync_key if type == "DELETED" else keys.status_key
            return [make(spec.published, owner)]

        self.watches.start(
            name,
            self._watch(
                for_url(self.kcp, f"{url}/clusters/*"),
                spec.kcp_path,
                name,
                KeyHandler(self.enqueue, remote),
                ignore_resource_versions=self._own("kcp"),
            ),
        )
        self.watches.start(
            name.replace("sync:", "local:", 1),
            self._watch(
                self.service,
                spec.local_path,
                f"local:{spec.published}",
                KeyHandler(self.enqueue, local),
                label_selector=f"{AGENT_LABEL}={self.agent_name}",
                ignore_resource_versions=self._own("local"),
            ),
        )
        log_event(
            logger,
            "publish.sync_started",
            publishedresource=spec.published,
            kcp=spec.kcp_path,
            local=spec.local_path,
        )

    def ready(self) -> tuple[bool, dict[str, Any]]:
        """Ready once the APIExport is resolved and every running watch has synced."""
        statuses = self.watches.statuses()
        ok = self.endpoint is not None and all(s["synced"] for s in statuses.values())
        return ok, {"watches": statuses}


def _source_of(published: dict[str, Any]) -> tuple[str | None, str | None]:
    resource = (published.get("spec") or {}).get("resource") or {}
    return resource.get("apiGroup"), resource.get("kind")


def _storage_version(versions: list[dict[str, Any]]) -> str:
    return str(next((v["name"] for v in versions if v.get("storage")), versions[0]["name"]))
