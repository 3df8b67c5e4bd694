"""Watch streams: resume from a resourceVersion, selectors, bookmarks, timeouts and ``410 Gone``."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from syncflow.devcluster import errors
from syncflow.devcluster.store import Obj, Store, TooOldError, WatchEvent
from syncflow.util.selectors import FieldSelector, LabelSelector


@dataclass(frozen=True)
class WatchRequest:
    """What a ``?watch=true`` request asks for."""

    cluster: str | None
    group: str
    plural: str
    namespace: str | None
    resource_version: str
    label_selector: LabelSelector
    field_selector: FieldSelector
    timeout: float
    bookmarks: bool
    send_initial_events: bool | None = None
    visible: Callable[[str, Obj], bool] = lambda cluster, obj: True


CHUNK_BYTES = 2048
"""Most bytes of events one chunk of a watch response carries, as kube-apiserver's (Go's HTTP server
buffers 2 KiB of a response before it writes a chunk): the events that wait together go out together,
an event larger than this in a chunk of its own. kube-apiserver flushes a watch only once no event waits,
so a quiet stream sends each event as it comes."""
DRAIN_EVENTS = 100
"""Most waiting events a stream takes from its queue at once."""


def default_timeout(min_request_timeout: float) -> float:
    """kube-apiserver's default: a random duration in [min, 2*min)."""
    return min_request_timeout * (1 + random.random())


class WatchStream:
    """Serves one watch request until timeout, client disconnect or the resource going away."""

    def __init__(
        self,
        store: Store,
        request: WatchRequest,
        present: Callable[[str, Obj], Obj],
        bookmark_object: Callable[[int], Obj],
        bookmark_interval: float,
    ) -> None:
        self.store = store
        self.request = request
        self.present = present
        self.bookmark_object = bookmark_object
        self.bookmark_interval = bookmark_interval

    def _matches(self, cluster: str, obj: Obj | None) -> bool:
        if obj is None:
            return False
        labels = obj["metadata"].get("labels") or {}
        req = self.request
        return (
            req.label_selector.matches(labels)
            and req.field_selector.matches(obj)
            and req.visible(cluster, obj)
        )

    def visible(self, event: WatchEvent) -> tuple[str, Obj] | None:
        """The event as this watcher sees it: selector transitions become ADDED/DELETED."""
        now, before = self._matches(event.cluster, event.obj), self._matches(event.cluster, event.old)
        if event.type == "ADDED":
            return ("ADDED", event.obj) if now else None
        if event.type == "DELETED":
            return ("DELETED", event.obj) if before else None
        if now and before:
            return "MODIFIED", event.obj
        if now:
            return "ADDED", event.obj
        if before:
            return "DELETED", event.obj
        return None

    def _initial(self) -> list[tuple[str, str, Obj]] | errors.StatusError:
        """Events (type, cluster, object) to send first, or the error to send instead."""
        req = self.request
        sub_rv = req.resource_version
        if sub_rv in ("", "0") or req.send_initial_events:
            return [
                ("ADDED", cluster, obj)
                for cluster, obj in self.store.items(req.cluster, req.group, req.plural, req.namespace)
                if self._matches(cluster, obj)
            ]
        try:
            since = int(sub_rv)
        except ValueError:
            return errors.bad_request(f"invalid resource version: {sub_rv}")
        try:
            events = self.store.events_since(since, self._subscription)
        except TooOldError as exc:
            return errors.gone(str(exc))
        return self._seen(events)

    def _seen(self, events: Iterable[WatchEvent | None]) -> list[tuple[str, str, Obj]]:
        """The events (type, cluster, object) this watcher sees of ``events`` (``visible``)."""
        visible = [(e.cluster, self.visible(e)) for e in events if e is not None]
        return [(seen[0], cluster, seen[1]) for cluster, seen in visible if seen is not None]

    async def serve(self, request: web.Request) -> web.StreamResponse:
        """Stream events as JSON lines."""
        req = self.request
        self._subscription = self.store.subscribe(req.cluster, req.group, req.plural, req.namespace)
        try:
            initial = self._initial()
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            response.enable_chunked_encoding()
            await response.prepare(request)
            if isinstance(initial, errors.StatusError):
                await self._write(response, "ERROR", initial.body())
                return response
            await self._send(response, initial)
            if req.send_initial_events and req.bookmarks:
                bookmark = self.bookmark_object(self.store.resource_version)
                bookmark["metadata"]["annotations"] = {"k8s.io/initial-events-end": "true"}
                await self._write(response, "BOOKMARK", bookmark)
            await self._follow(request, response)
            return response
        finally:
            self.store.unsubscribe(self._subscription)

    async def _follow(self, request: web.Request, response: web.StreamResponse) -> None:
        """Send events until the timeout, the client hanging up (seen at its next event or bookmark
        interval, as nothing is written to it before), or the end of the resource."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.request.timeout
        queue = self._subscription.queue
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0 or request.transport is None:
                return
            try:
                event = await asyncio.wait_for(queue.get(), min(remaining, self.bookmark_interval))
            except TimeoutError:
                # A bookmark says every event up to its version was sent: not while an event stored
                # since the wait timed out still waits in the queue (it would follow a bookmark past it,
                # and a client resuming from that bookmark would never see it).
                if self.request.bookmarks and loop.time() < deadline and queue.empty():
                    await self._write(response, "BOOKMARK", self.bookmark_object(self.store.resource_version))
                continue
            pending = [event, *_waiting(queue)]
            await self._send(response, self._seen(pending))
            if None in pending:
                return

    async def _send(self, response: web.StreamResponse, events: Sequence[tuple[str, str, Obj]]) -> None:
        """Write ``events`` (type, cluster, object) in as few chunks of at most ``CHUNK_BYTES`` as their
        lines fit in."""
        chunk: list[bytes] = []
        size = 0
        for kind, cluster, obj in events:
            line = _line(kind, self.present(cluster, obj))
            if chunk and size + len(line) > CHUNK_BYTES:
                await response.write(b"".join(chunk))
                chunk, size = [], 0
            chunk.append(line)
            size += len(line)
        if chunk:
            await response.write(b"".join(chunk))

    @staticmethod
    async def _write(response: web.StreamResponse, kind: str, obj: dict[str, Any]) -> None:
        await response.write(_line(kind, obj))


def _waiting(queue: asyncio.Queue[WatchEvent | None]) -> list[WatchEvent | None]:
    """The events already waiting in ``queue`` (at most ``DRAIN_EVENTS``), taken without waiting, up to
    the end of the stream (``None``) if it comes first."""
    taken: list[WatchEvent | None] = []
    while len(taken) < DRAIN_EVENTS and not queue.empty():
        taken.append(queue.get_nowait())
        if taken[-1] is None:
            break
    return taken


def _line(kind: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": kind, "object": obj}) + b"\n"
