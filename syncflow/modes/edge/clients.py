"""Edge mode's endpoints: ``kcp`` is the mailbox workspace, ``pcluster`` the edge cluster."""

from __future__ import annotations

from dataclasses import dataclass

from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.edge.rules import KCP, PCLUSTER


@dataclass(frozen=True)
class EdgeEndpoints:
    """One mailbox workspace, one p-cluster."""

    mailbox: JsonApi
    pcluster: JsonApi

    def api(self, endpoint: str, cluster: str) -> JsonApi:
        """The mailbox (there is one logical cluster) or the p-cluster."""
        if endpoint == KCP:
            return self.mailbox
        if endpoint == PCLUSTER:
            return self.pcluster
        raise ValueError(f"edge mode has no endpoint {endpoint!r}")

    def everywhere(self, endpoint: str) -> list[JsonApi]:
        """The same single client."""
        return [self.api(endpoint, "")]
