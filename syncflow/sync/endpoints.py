"""How the engine reaches the two sides of a rule: the ``Endpoints`` a mode provides.

A rule names its endpoints (``"kcp"``, ``"service"``, ``"cluster:east"`` ...); the mode's
``Endpoints`` turns a name (and a logical cluster) into a client. The engine never builds clients.
"""

from __future__ import annotations

from typing import Protocol

from syncflow.kube.jsonapi import JsonApi


class Endpoints(Protocol):
    """Clients for the endpoints a mode's rules name."""

    def api(self, endpoint: str, cluster: str) -> JsonApi:
        """A client for one logical cluster of ``endpoint`` (a plain cluster ignores ``cluster``)."""

    def everywhere(self, endpoint: str) -> list[JsonApi]:
        """Clients that list and watch across every logical cluster of ``endpoint`` (one per shard URL)."""
