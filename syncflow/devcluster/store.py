"""In-memory object storage with one resourceVersion counter and a bounded window of watch events.

Everything runs on one asyncio event loop, so each method is atomic. Stored objects are never
mutated after they are stored: callers build a new dict and ``put`` it. Each resource's names are
also kept in order, so a page of a list starts where the last one ended (as etcd's key order lets
kube-apiserver) instead of sorting the whole resource again for every page.
"""

from __future__ import annotations

import asyncio
import heapq
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sortedcontainers import SortedList

Obj = dict[str, Any]
ResourceKey = tuple[str, str, str]  # (cluster, group, plural)
ObjectName = tuple[str, str]  # (namespace, name)
ListPosition = tuple[str, str, str]
"""(namespace, name, cluster): the order in which lists serve objects across clusters."""


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
        self._data: dict[ResourceKey, dict[ObjectName, Obj]] = {}
        self._order: dict[ResourceKey, SortedList[ObjectName]] = {}
        self._clusters: dict[tuple[str, str], set[str]] = {}
        """(group, plural) -> the clusters holding objects of it."""
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
        for c in self._holding(cluster, group, plural):
            resource = (c, group, plural)
            objects = self._data[resource]
            if namespace is None:
                yield from ((c, obj) for obj in objects.values())
            else:
                yield from ((c, objects[key]) for key in _in_namespace(self._order[resource], namespace))

    def ordered(
        self,
        cluster: str | None,
        group: str,
        plural: str,
        namespace: str | None = None,
        after: ListPosition | None = None,
    ) -> Iterator[tuple[str, Obj]]:
        """``items`` in list order (namespace, name, cluster), only those past ``after``; each step
        costs the same however many objects come before ``after``."""
        runs = [
            self._ordered_run(c, group, plural, namespace, after)
            for c in self._holding(cluster, group, plural)
        ]
        for _, c, obj in runs[0] if len(runs) == 1 else heapq.merge(*runs, key=lambda run: run[0]):
            yield c, obj

    def _ordered_run(
        self, cluster: str, group: str, plural: str, namespace: str | None, after: ListPosition | None
    ) -> Iterator[tuple[ListPosition, str, Obj]]:
        resource = (cluster, group, plural)
        objects, order = self._data[resource], self._order[resource]
        if namespace is not None:
            keys = _in_namespace(order, namespace, after[:2] if after is not None else None)
        else:
            keys = order.irange(after[:2]) if after is not None else iter(order)
        for ns, name in keys:
            position = (ns, name, cluster)
            if after is None or position > after:
                yield position, cluster, objects[(ns, name)]

    def _holding(self, cluster: str | None, group: str, plural: str) -> list[str]:
        """The clusters (all, or just ``cluster``) that hold objects of a resource."""
        holding = self._clusters.get((group, plural), set())
        if cluster is not None:
            return [cluster] if cluster in holding else []
        return sorted(holding)

    def count(self, cluster: str, group: str, plural: str, namespace: str | None = None) -> int:
        """Number of stored objects of a resource (in a namespace)."""
        objects = self._data.get((cluster, group, plural), {})
        if namespace is None:
            return len(objects)
        order = self._order.get((cluster, group, plural))
        return 0 if order is None else sum(1 for _ in _in_namespace(order, namespace))

    def put(self, cluster: str, group: str, plural: str, obj: Obj, old: Obj | None) -> Obj:
        """Store ``obj`` (created if ``old`` is None) under a new resourceVersion and emit the event."""
        rv = self._bump()
        obj["metadata"]["resourceVersion"] = str(rv)
        meta = obj["metadata"]
        resource, key = (cluster, group, plural), (meta.get("namespace", ""), meta["name"])
        objects = self._data.setdefault(resource, {})
        if key not in objects:
            self._order.setdefault(resource, SortedList()).add(key)
            self._clusters.setdefault((group, plural), set()).add(cluster)
        objects[key] = obj
        self._emit(WatchEvent(rv, cluster, group, plural, "ADDED" if old is None else "MODIFIED", obj, old))
        return obj

    def remove(self, cluster: str, group: str, plural: str, obj: Obj) -> Obj:
        """Delete ``obj``; the DELETED event carries its last state under a new resourceVersion."""
        meta = obj["metadata"]
        resource, key = (cluster, group, plural), (meta.get("namespace", ""), meta["name"])
        objects = self._data.get(resource, {})
        if objects.pop(key, None) is not None:
            self._order[resource].remove(key)
        if not objects:
            self._data.pop(resource, None)
            self._order.pop(resource, None)
            holding = self._clusters.get((group, plural), set())
            holding.discard(cluster)
            if not holding:
                self._clusters.pop((group, plural), None)
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


def _in_namespace(
    order: SortedList[ObjectName], namespace: str, start: ObjectName | None = None
) -> Iterator[ObjectName]:
    """The names of ``order`` in ``namespace``, in order, from ``start`` (included) when it is later."""
    first = (namespace, "") if start is None else max((namespace, ""), start)
    names: Iterator[ObjectName] = order.irange(first, (namespace + "\0", ""), inclusive=(True, False))
    return names
