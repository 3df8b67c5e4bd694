"""The list+watch loop of one resource, reporting through a small handler interface.

List (paginated), then watch from the list's resourceVersion with bookmarks; resume from the last
seen version after a normal end, a dropped connection or a silent stream; on ``410 Gone`` relist
and resync the union of the refs known before and listed now, so deletes missed meanwhile are
reconciled. The loop never reports a delete it did not receive from the server.

Timeouts: the watchdog closes a connection silent (no event, no bookmark) for ``inactivity_timeout``;
every socket read, including the response headers, is bounded a little later as a backstop
(urllib3's read timeout is per read); a whole connection by ``server_timeout`` plus a grace.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from syncflow.kube import deferred, echoes, snapshots
from syncflow.kube.backoff import Backoff
from syncflow.kube.bookmarks import Bookmarks
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.refs import ObjectRef
from syncflow.kube.stream import INACTIVE, GuardedStream, open_stream
from syncflow.metrics import record as metrics
from syncflow.util.logs import log_event

logger = logging.getLogger(__name__)

CLIENT_GRACE = 30.0
"""How much longer than the server timeout a client waits for a watch connection to end."""

READ_SLACK = 1.0
"""How much longer than the watchdog one socket read may block (so the watchdog speaks first)."""

BOOKMARK_INTERVAL = 1.0
"""At most how often a streaming watch stores its resume point (one Redis transaction each). It is
also stored at every server BOOKMARK and whenever a connection ends, so a restart replays at most the
events of the last interval (their reconciles are idempotent) and never skips one."""

BOOKMARK_BATCH = 1000
"""Ref changes after which the resume point is stored at once, whatever the interval."""


class WatchHandler(Protocol):
    """Receives what a ``ResourceWatch`` sees."""

    def on_event(self, type: str, obj: dict[str, Any], ref: ObjectRef) -> None:
        """One ADDED, MODIFIED or DELETED event."""

    def on_resync(self, refs: set[ObjectRef]) -> None:
        """Every ref to (re)enqueue in bulk: after the initial list and after each relist."""


@dataclass(frozen=True)
class WatchStatus:
    """Readiness of one watch: ``synced`` once listed (or resumed), ``healthy`` while connected."""

    synced: bool
    healthy: bool
    last_error: str | None
    resource_version: str


class GoneError(Exception):
    """The resourceVersion we resume from is too old: relist."""


class StalledError(Exception):
    """The watchdog closed a connection that had been silent too long."""


class ResourceWatch:
    """List and watch one collection (``list_path``) until stopped; each connection and failure is
    reported as the connection status of ``endpoint`` (a mode's endpoint name; empty: not reported);
    ``on_connected`` runs each time the watch connects after not being connected. Events are handled
    as coming from ``echo_side`` (``syncflow.kube.echoes``: the queue drops our own writes' echoes) and, with
    ``keep_snapshots``, offer their object as the keys' snapshot (``syncflow.kube.snapshots``)."""

    def __init__(
        self,
        api: client.ApiClient,
        list_path: str,
        name: str,
        handler: WatchHandler,
        bookmarks: Bookmarks,
        *,
        label_selector: str = "",
        field_selector: str = "",
        page_size: int = 500,
        server_timeout: int = 300,
        inactivity_timeout: float = 70.0,
        connect_timeout: float = 10.0,
        list_timeout: float = 60.0,
        backoff: Backoff | None = None,
        echo_side: str = "",
        keep_snapshots: bool = False,
        endpoint: str = "",
        on_connected: Callable[[], None] | None = None,
    ) -> None:
        self.api = api
        self.list_path = list_path
        self.name = name
        self.handler = handler
        self.bookmarks = bookmarks
        self.selectors = {
            key: value
            for key, value in (("labelSelector", label_selector), ("fieldSelector", field_selector))
            if value
        }
        self.page_size = page_size
        self.server_timeout = server_timeout
        self.inactivity_timeout = inactivity_timeout
        self.connect_timeout = connect_timeout
        self.list_timeout = list_timeout
        self.backoff = backoff or Backoff()
        self.echo_side = echo_side
        self.keep_snapshots = keep_snapshots
        self.endpoint = endpoint
        self.on_connected = on_connected
        self._rv = ""
        self._known: set[ObjectRef] = set()
        self._unsaved_added: set[ObjectRef] = set()
        self._unsaved_removed: set[ObjectRef] = set()
        self._unsaved = False
        self._saved_at = 0.0
        self._lock = threading.Lock()
        self._status = WatchStatus(False, False, None, "")

    @property
    def status(self) -> WatchStatus:
        """The current readiness."""
        with self._lock:
            return self._status

    def _set_status(self, **changes: Any) -> None:
        with self._lock:
            was_healthy = self._status.healthy
            fields = {**self._status.__dict__, "resource_version": self._rv, **changes}
            self._status = WatchStatus(**fields)
        if "healthy" in changes:
            metrics.connection(self.endpoint, changes["healthy"])
            if changes["healthy"] and not was_healthy and self.on_connected is not None:
                self.on_connected()

    def run(self, stop: threading.Event) -> None:
        """List and watch until ``stop`` is set."""
        saved = self.bookmarks.get(self.name)
        if saved is not None:
            self._rv, self._known = saved.resource_version, set(saved.refs)
            log_event(logger, "watch.resume", watch=self.name, resource_version=self._rv)
        while not stop.is_set():
            try:
                if not self._rv:
                    self._relist(stop)
                    if stop.is_set():
                        break
                self._watch(stop)
            except GoneError as exc:
                log_event(logger, "watch.expired", watch=self.name, resource_version=self._rv, error=str(exc))
                self._rv = ""
            except Exception as exc:  # a watcher must outlive every failure; each one is logged
                self._failed(exc, stop)

    def _failed(self, exc: Exception, stop: threading.Event) -> None:
        error = f"{type(exc).__name__}: {exc}"
        retry_in = round(self.backoff.next(), 3)
        self._set_status(healthy=False, last_error=error)
        log_event(
            logger, "watch.failed", level=logging.WARNING, watch=self.name, error=error, retry_in=retry_in
        )
        stop.wait(retry_in)

    def _relist(self, stop: threading.Event) -> None:
        """List every page, resync the union of known and listed refs, and start over from there. A
        stop ends the list at the next page and leaves the rest to the next list: nothing is reported
        or stored, so a watch given up while it lists (``WatchSet.stop``) never writes afterwards."""
        listed: set[ObjectRef] = set()
        lister = JsonApi(self.api, timeout=(self.connect_timeout, self.list_timeout))
        query = {**self.selectors, "limit": str(self.page_size)}
        token, rv = "", ""
        while True:
            try:
                page = lister.get(self.list_path, **query, **({"continue": token} if token else {}))
            except ApiException as exc:
                if exc.status == 410 and token:  # the continue token expired: list again from the start
                    listed, token = set(), ""
                    continue
                raise
            listed.update(ObjectRef.of(item) for item in page.get("items") or ())
            meta = page.get("metadata") or {}
            rv = rv or meta.get("resourceVersion", "")
            token = meta.get("continue", "")
            if stop.is_set():
                return
            if not token:
                break
        self.handler.on_resync(listed | self._known)
        self._known = listed
        self._rv = rv
        self.bookmarks.set(self.name, rv, known=listed)
        self._unsaved_added.clear()
        self._unsaved_removed.clear()
        self._unsaved = False
        self._set_status(synced=True)
        log_event(logger, "watch.listed", watch=self.name, objects=len(listed), resource_version=rv)

    def _watch(self, stop: threading.Event) -> None:
        """One watch connection from the current resourceVersion, until it ends."""
        query = [
            *self.selectors.items(),
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", self._rv),
            ("timeoutSeconds", str(self.server_timeout)),
        ]
        try:
            response = open_stream(
                self.api,
                self.list_path,
                query,
                timeout=(self.connect_timeout, self.inactivity_timeout + READ_SLACK),
            )
        except ApiException as exc:
            if exc.status == 410:
                raise GoneError(str(exc.body)) from exc
            raise
        if stop.is_set():  # given up while it waited for the server (``WatchSet.stop``): take nothing
            response.close()
            return
        self._set_status(synced=True, healthy=True, last_error=None)
        stream = GuardedStream(
            response,
            stop,
            inactivity=self.inactivity_timeout,
            lifetime=self.server_timeout + CLIENT_GRACE,
        )
        try:
            with contextlib.closing(stream.reads()) as reads:
                for events in reads:
                    self._take_read(events)
                    # Only events taken reset the backoff: a connection whose events cannot be taken
                    # (the queue's Redis is gone) is retried ever more slowly, not several times a second.
                    self.backoff.reset()
        except (urllib3.exceptions.HTTPError, OSError):
            if stream.reason is None:  # a dropped connection; otherwise we shut it down ourselves
                raise
        finally:
            self._save_at_end()
        if stream.reason == INACTIVE:
            raise StalledError(f"no event for {self.inactivity_timeout}s")

    def _take_read(self, events: list[dict[str, Any]]) -> None:
        """The events of one read of the stream: each handed to the handler, then the work the handler
        deferred done (``syncflow.kube.deferred``), then each remembered; a bookmark or an error first
        finishes the events before it."""
        taken: list[tuple[str, ObjectRef, str]] = []
        with deferred.one_read() as read:
            for event in events:
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    self._remember(read, taken)
                    if obj.get("code") == 410:
                        raise GoneError(str(obj.get("message", "")))
                    raise ApiException(status=obj.get("code"), reason=obj.get("reason"), body=json.dumps(obj))
                rv = (obj.get("metadata") or {}).get("resourceVersion", "")
                if kind == "BOOKMARK":
                    self._remember(read, taken)
                    self._advance(rv)
                    self._save()
                else:
                    taken.append(self._take(str(kind), obj, rv))
            self._remember(read, taken)

    def _take(self, kind: str, obj: dict[str, Any], rv: str) -> tuple[str, ObjectRef, str]:
        """Hand one event to the handler; returns what ``_remember`` needs of it."""
        ref = ObjectRef.of(obj)
        kept = obj if self.keep_snapshots and kind != "DELETED" else None
        with echoes.event_origin(self.echo_side, ref, rv), snapshots.event_object(self.echo_side, kept):
            self.handler.on_event(kind, obj, ref)
        return kind, ref, rv

    def _remember(self, read: deferred.Read, taken: list[tuple[str, ObjectRef, str]]) -> None:
        """Do the work the handler deferred for the ``taken`` events, then remember them (emptied)."""
        read.flush()
        for kind, ref, rv in taken:
            if kind == "DELETED":
                self._known.discard(ref)
                self._advance(rv, removed=ref)
            else:
                self._known.add(ref)
                self._advance(rv, added=ref)
        taken.clear()

    def _advance(self, rv: str, *, added: ObjectRef | None = None, removed: ObjectRef | None = None) -> None:
        """Remember ``rv`` (after the handler took the event) so a restart resumes after it; stored in
        the bookmarks every ``BOOKMARK_INTERVAL`` (see ``_save``)."""
        if not rv:
            return
        self._rv = rv
        self._unsaved = True
        if added is not None:
            self._unsaved_added.add(added)
            self._unsaved_removed.discard(added)
        if removed is not None:
            self._unsaved_removed.add(removed)
            self._unsaved_added.discard(removed)
        changes = len(self._unsaved_added) + len(self._unsaved_removed)
        if changes >= BOOKMARK_BATCH or time.monotonic() - self._saved_at >= BOOKMARK_INTERVAL:
            self._save()
        self._set_status()

    def _save_at_end(self) -> None:
        """``_save`` as a connection ends. If it ends in an error, a failed store is logged, not raised:
        the watch reports and handles the stream's error (e.g. 410 Gone relists), and the unsaved
        changes stay for the next store."""
        if sys.exception() is None:
            self._save()
            return
        try:
            self._save()
        except Exception as exc:
            log_event(
                logger,
                "watch.save_failed",
                level=logging.WARNING,
                watch=self.name,
                resource_version=self._rv,
                error=f"{type(exc).__name__}: {exc}",
            )

    def _save(self) -> None:
        """Store the resume point and the ref changes seen since the last store (no-op if none)."""
        if not self._unsaved:
            return
        self.bookmarks.set(self.name, self._rv, added=self._unsaved_added, removed=self._unsaved_removed)
        self._unsaved_added.clear()
        self._unsaved_removed.clear()
        self._unsaved = False
        self._saved_at = time.monotonic()
