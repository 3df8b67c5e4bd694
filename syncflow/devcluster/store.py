"""In-memory object storage with one resourceVersion counter and a bounded window of watch events.

Everything runs on one asyncio event loop, so each method is atomic. Stored objects are never
mutated after they are stored: callers build a new dict and ``put`` it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]
ResourceKey = tuple[str, str, str]  # (cluster, group, plural)


@dataclass(frozen=True)
class WatchEvent:
    """One change, as a watch stream reports it. ``old`` is the state before (None for ADDED)."""

    rv: int
    cluster: str
    group: str
    plural: str
    type: str
    obj: Obj
    old: Obj | None

    @property
    def namespace(self) -> str:
        """Namespace of the changed object ('' for cluster-scoped)."""
        return str(self.obj["metadata"].get("namespace", ""))


class TooOldError(Exception):
    """The requested resourceVersion has left the event window."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")


@dataclass(eq=False)
class Subscription:
    """A live feed of events for one resource, optionally limited to a cluster and namespace.

    ``cluster=None`` means every cluster (a wildcard watch). A ``None`` in the queue means the
    stream must end: its resource stopped being served, or its reader fell ``limit`` events behind.
    """

    cluster: str | None
    group: str
    plural: str
    namespace: str | None
    limit: int
    queue: asyncio.Queue[WatchEvent | None] = field(default_factory=asyncio.Queue)

    def offer(self, event: WatchEvent) -> bool:
        """Queue ``event``; False, with nothing queued, if ``limit`` events already wait."""
        if self.queue.qsize() >= self.limit:
            return False
        self.queue.put_nowait(event)
        return True

    def wants(self, event: WatchEvent) -> bool:
        """True if this subscription covers the event's object."""
        return (
            event.group == self.group
            and event.plural == self.plural
            and (self.cluster is None or event.cluster == self.cluster)
            and (self.namespace is None or event.namespace == self.namespace)
        )


class Store:
    """All objects of all clusters, the global resourceVersion and the event window."""

    def __init__(self, history: int = 10_000) -> None:
        self._data: dict[ResourceKey, dict[tuple[str, str], Obj]] = {}
        self._history: deque[WatchEvent] = deque(maxlen=history)
        self._compacted = 0
        self._subscriptions: set[Subscription] = set()
        self.resource_version = 1

    def get(self, cluster: str, group: str, plural: str, namespace: str, name: str) -> Obj | None:
        """One object, or None."""
        return self._data.get((cluster, group, plural), {}).get((namespace, name))

    def items(
        self, cluster: str | None, group: str, plural: str, namespace: str | None = None
    ) -> Iterator[tuple[str, Obj]]:
        """(cluster, object) pairs of one resource; ``None`` for all clusters / namespaces."""
        for (c, g, p), objects in self._data.items():
            if g != group or p != plural or (cluster is not None and c != cluster):
                continue
            for (ns, _), obj in objects.items():
                if namespace is None or ns == namespace:
                    yield c, obj

    def count(self, cluster: str, group: str, plural: str, namespace: str | None = None) -> int:
        """Number of stored objects of a resource (in a namespace)."""
        objects = self._data.get((cluster, group, plural), {})
        if namespace is None:
            return len(objects)
        return sum(1 for ns, _ in objects if ns == namespace)

    def put(self, cluster: str, group: str, plural: str, obj: Obj, old: Obj | None) -> Obj:
        """Store ``obj`` (created if ``old`` is None) under a new resourceVersion and emit the event."""
        rv = self._bump()
        obj["metadata"]["resourceVersion"] = str(rv)
        meta = obj["metadata"]
        self._data.setdefault((cluster, group, plural), {})[(meta.get("namespace", ""), meta["name"])] = obj
        self._emit(WatchEvent(rv, cluster, group, plural, "ADDED" if old is None else "MODIFIED", obj, old))
        return obj

    def remove(self, cluster: str, group: str, plural: str, obj: Obj) -> Obj:
        """Delete ``obj``; the DELETED event carries its last state under a new resourceVersion."""
        meta = obj["metadata"]
        objects = self._data.get((cluster, group, plural), {})
        objects.pop((meta.get("namespace", ""), meta["name"]), None)
        if not objects:
            self._data.pop((cluster, group, plural), None)
        rv = self._bump()
        final = {**obj, "metadata": {**meta, "resourceVersion": str(rv)}}
        self._emit(WatchEvent(rv, cluster, group, plural, "DELETED", final, obj))
        return final

    def events_since(self, rv: int, sub: Subscription) -> list[WatchEvent]:
        """Events after ``rv`` that ``sub`` wants; raises TooOldError if some have left the window."""
        if rv < self._compacted:
            raise TooOldError(rv, self._compacted + 1)
        found: list[WatchEvent] = []
        for event in reversed(self._history):
            if event.rv <= rv:
                break
            if sub.wants(event):
                found.append(event)
        found.reverse()
        return found

    def subscribe(self, cluster: str | None, group: str, plural: str, namespace: str | None) -> Subscription:
        """Start receiving events; pair with ``unsubscribe``."""
        sub = Subscription(cluster, group, plural, namespace, limit=self._history.maxlen or 1)
        self._subscriptions.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop receiving events."""
        self._subscriptions.discard(sub)

    def open_watches(self) -> int:
        """Subscriptions not yet ended: one per watch stream being served."""
        return len(self._subscriptions)

    def end_watches(self, cluster: str, group: str, plural: str) -> None:
        """End every watch stream on a resource that is no longer served."""
        for sub in list(self._subscriptions):
            if sub.group == group and sub.plural == plural and sub.cluster in (None, cluster):
                self._end(sub)

    def _end(self, sub: Subscription) -> None:
        """Queue no more events for ``sub``: its stream ends after what it holds."""
        self._subscriptions.discard(sub)
        sub.queue.put_nowait(None)

    def _bump(self) -> int:
        self.resource_version += 1
        return self.resource_version

    def _emit(self, event: WatchEvent) -> None:
        if len(self._history) == self._history.maxlen:
            self._compacted = self._history[0].rv
        self._history.append(event)
        behind = [sub for sub in self._subscriptions if sub.wants(event) and not sub.offer(event)]
        for sub in behind:
            # As a kube-apiserver's watch cache drops an unresponsive watcher; the client's resume
            # from its last resourceVersion finds the events it missed in the history, or 410 Gone
            # once they have left it.
            self._end(sub)
