"""Namespaces on the target, created when missing, with a bounded per-process memory of the ones known to
exist: a create into a known namespace needs no GET of it first.

A stale entry (the namespace was deleted since) costs one retry, never a wrong write: a create that
answers 404 forgets the namespace, ensures it and creates once more; entries also expire after
``KNOWN_SECONDS``.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi

Obj = dict[str, Any]
KNOWN_LIMIT = 10_000
"""Most namespaces remembered per process (the least recently confirmed are forgotten first)."""
KNOWN_SECONDS = 300.0
"""How long a namespace is trusted to exist without a GET."""


class KnownNamespaces:
    """``(endpoint URL, namespace)`` pairs seen to exist, each until it expires; bounded, thread-safe."""

    def __init__(self, limit: int = KNOWN_LIMIT, ttl: float = KNOWN_SECONDS) -> None:
        self.limit, self.ttl = limit, ttl
        self._until: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, entry: tuple[str, str]) -> bool:
        with self._lock:
            until = self._until.get(entry)
            if until is not None and until < time.monotonic():
                del self._until[entry]
                return False
            return until is not None

    def add(self, entry: tuple[str, str]) -> None:
        """Remember that ``entry`` exists now."""
        with self._lock:
            self._until[entry] = time.monotonic() + self.ttl
            self._until.move_to_end(entry)
            while len(self._until) > self.limit:
                self._until.popitem(last=False)

    def forget(self, entry: tuple[str, str]) -> bool:
        """Drop ``entry``; True if it was remembered."""
        with self._lock:
            return self._until.pop(entry, None) is not None


KNOWN = KnownNamespaces()


def ensure_namespace(api: JsonApi, name: str, namespace_obj: Obj | None = None) -> None:
    """Create Namespace ``name`` (as ``namespace_obj`` if given) when it is missing; never change it."""
    if not name or (api.host, name) in KNOWN:
        return
    try:
        api.get(f"/api/v1/namespaces/{name}")
    except ApiException as exc:
        if exc.status != 404:
            raise
        namespace = namespace_obj or {"metadata": {"name": name}}
        try:
            api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", **namespace})
        except ApiException as create_exc:
            if create_exc.status != 409:
                raise
    KNOWN.add((api.host, name))


def create_in(
    api: JsonApi, collection: str, namespace: str, body: Obj, namespace_obj: Obj | None = None
) -> Obj:
    """POST ``body`` to ``collection`` in ``namespace`` (none: cluster-scoped), ensuring the namespace first;
    a 404 from a namespace remembered to exist forgets it, ensures it and creates once more."""
    ensure_namespace(api, namespace, namespace_obj)
    try:
        return api.create(collection, body)
    except ApiException as exc:
        if exc.status != 404 or not namespace or not KNOWN.forget((api.host, namespace)):
            raise
    ensure_namespace(api, namespace, namespace_obj)
    return api.create(collection, body)
