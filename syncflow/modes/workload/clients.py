"""Workload mode's endpoints: ``kcp`` is the SyncTarget's workspace, ``cluster`` the physical cluster."""

from __future__ import annotations

from dataclasses import dataclass

from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.workload.target import CLUSTER, KCP


@dataclass(frozen=True)
class WorkloadEndpoints:
    """One workspace upstream, one physical cluster downstream."""

    workspace: JsonApi
    physical: JsonApi

    def api(self, endpoint: str, cluster: str) -> JsonApi:
        """The workspace (any logical cluster name: there is one) or the physical cluster."""
        if endpoint == KCP:
            return self.workspace
        if endpoint == CLUSTER:
            return self.physical
        raise ValueError(f"workload mode has no endpoint {endpoint!r}")

    def everywhere(self, endpoint: str) -> list[JsonApi]:
        """The same single client: workload mode watches one workspace."""
        return [self.api(endpoint, "")]
