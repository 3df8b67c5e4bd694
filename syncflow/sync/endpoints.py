"""How the engine reaches the two sides of a rule: the ``Endpoints`` a mode provides.

A rule names its endpoints (``"kcp"``, ``"service"``, ``"cluster:east"`` ...); the mode's
``Endpoints`` turns a name (and a logical cluster) into a client. The engine never builds clients
itself; for endpoints that come and go at runtime (one per API object that holds a kubeconfig) a
mode keeps their clients in a ``ClientCache``.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.errors import TransientError


class Endpoints(Protocol):
    """Clients for the endpoints a mode's rules name."""

    def api(self, endpoint: str, cluster: str) -> JsonApi:
        """A client for one logical cluster of ``endpoint`` (a plain cluster ignores ``cluster``)."""

    def everywhere(self, endpoint: str) -> list[JsonApi]:
        """Clients that list and watch across every logical cluster of ``endpoint`` (one per shard URL)."""


@dataclass(frozen=True)
class EndpointPair:
    """Two fixed endpoints of one client each: an upstream workspace (one logical cluster, so any
    cluster name gives it) and a downstream cluster, e.g. workload mode's SyncTarget workspace and
    physical cluster, or edge mode's mailbox workspace and p-cluster."""

    upstream_name: str
    upstream: JsonApi
    downstream_name: str
    downstream: JsonApi

    def api(self, endpoint: str, cluster: str) -> JsonApi:
        """The upstream client (whatever ``cluster``: there is one) or the downstream one."""
        if endpoint == self.upstream_name:
            return self.upstream
        if endpoint == self.downstream_name:
            return self.downstream
        raise ValueError(
            f"no endpoint {endpoint!r}: only {self.upstream_name!r} and {self.downstream_name!r}"
        )

    def everywhere(self, endpoint: str) -> list[JsonApi]:
        """The same single client."""
        return [self.api(endpoint, "")]


class EndpointError(TransientError):
    """An endpoint that does not exist (yet) or cannot be used now; ``reason`` is a CamelCase cause.

    The message names the endpoint and never quotes its configuration (it may hold credentials).
    """

    def __init__(self, message: str, reason: str = "Unavailable") -> None:
        super().__init__(message)
        self.reason = reason


ClientBuilder = Callable[[], JsonApi]
Loader = Callable[[str], tuple[str, ClientBuilder]]
"""Reads an endpoint's current configuration: a fingerprint of it and a builder of its client.
Raises ``EndpointError`` when the endpoint does not exist or its configuration cannot be used."""


class ClientCache:
    """Clients of endpoints that appear and disappear at runtime (e.g. one per API object holding a
    kubeconfig): each is built once per fingerprint of its configuration, which is read again at most
    every ``recheck`` seconds. At most ``limit`` clients are kept (least recently used go first)."""

    def __init__(
        self,
        load: Loader,
        *,
        recheck: float = 5.0,
        limit: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.load = load
        self.recheck = recheck
        self.limit = limit
        self.clock = clock
        self._lock = threading.Lock()
        self._clients: OrderedDict[str, tuple[float, str, JsonApi]] = OrderedDict()

    def get(self, endpoint: str, *, fresh: bool = False) -> JsonApi:
        """The client of ``endpoint``; ``fresh`` reads its configuration again now."""
        with self._lock:
            cached = self._clients.get(endpoint)
            if cached is not None:
                self._clients.move_to_end(endpoint)
                if not fresh and self.clock() - cached[0] < self.recheck:
                    return cached[2]
        try:
            fingerprint, build = self.load(endpoint)
        except EndpointError:
            self.forget(endpoint)
            raise
        with self._lock:
            cached = self._clients.get(endpoint)
            client = cached[2] if cached is not None and cached[1] == fingerprint else build()
            self._clients[endpoint] = (self.clock(), fingerprint, client)
            self._clients.move_to_end(endpoint)
            while len(self._clients) > self.limit:
                self._clients.popitem(last=False)
            return client

    def forget(self, endpoint: str) -> None:
        """Drop the client of ``endpoint`` (its next use loads it again)."""
        with self._lock:
            self._clients.pop(endpoint, None)
