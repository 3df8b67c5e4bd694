"""Clusters mode's endpoints: ``kcp`` is the workspace of the Clusters, ``cluster:<name>`` each Cluster.

A Cluster's client is built from its ``spec.kubeconfig`` when first needed and again only when the
kubeconfig changes (the engine's ``ClientCache``; a probe's status write does not rebuild it). A
syncer that serves one cluster from inside it (``--only-cluster``) reaches that cluster with its own
kubeconfig instead: the sync code cannot tell the difference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubernetes.client import ApiClient

from syncflow.api.cluster import PATH
from syncflow.kube.clients import KubeconfigError
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kubeconfigs import fingerprint, inline_client
from syncflow.modes.clusters.identity import KCP, cluster_of, endpoint
from syncflow.sync.endpoints import ClientBuilder, ClientCache, EndpointError, Loader
from syncflow.sync.reconciler import get_or_none

ClientOf = Callable[[ApiClient, str], JsonApi]
"""Makes the client of an endpoint from its ApiClient (a worker's takes from the shared request budget
and reports the endpoint's connection status)."""


def from_clusters(kcp: JsonApi, client_of: ClientOf, *, allow_link_local: bool = False) -> Loader:
    """Loads ``cluster:<name>`` from the Cluster object: its kubeconfig's fingerprint and client (which
    refuses link-local and cloud metadata addresses unless ``allow_link_local``)."""

    def load(name: str) -> tuple[str, ClientBuilder]:
        cluster = cluster_of(name)
        obj = get_or_none(kcp, f"{PATH}/{cluster}") if cluster else None
        if obj is None:
            raise EndpointError(f'no Cluster "{cluster}" in the workspace', "NotFound")
        text = (obj.get("spec") or {}).get("kubeconfig")
        if not isinstance(text, str) or not text:
            raise EndpointError(f'Cluster "{cluster}": spec.kubeconfig is empty', "InvalidKubeconfig")

        def build() -> JsonApi:
            try:
                api = inline_client(text, allow_link_local=allow_link_local)
            except KubeconfigError as exc:
                raise EndpointError(
                    f'Cluster "{cluster}": spec.kubeconfig: {exc}', "InvalidKubeconfig"
                ) from None
            return client_of(api, name)

        return fingerprint(obj["metadata"].get("uid", "") + text), build

    return load


def only(cluster: str, client: JsonApi) -> Loader:
    """Loads ``cluster:<cluster>`` as ``client`` (a syncer inside that cluster); no other Cluster."""

    def load(name: str) -> tuple[str, ClientBuilder]:
        if name != endpoint(cluster):
            raise EndpointError(f"this syncer serves Cluster {cluster!r} only, not {name!r}", "NotFound")
        return "local", lambda: client

    return load


@dataclass(frozen=True)
class ClustersEndpoints:
    """The workspace upstream; each Cluster downstream."""

    workspace: JsonApi
    clusters: ClientCache

    def api(self, endpoint_name: str, cluster: str) -> JsonApi:
        """The workspace (there is one logical cluster) or a Cluster."""
        if endpoint_name == KCP:
            return self.workspace
        if cluster_of(endpoint_name) is None:
            raise ValueError(f"clusters mode has no endpoint {endpoint_name!r}")
        return self.clusters.get(endpoint_name)

    def everywhere(self, endpoint_name: str) -> list[JsonApi]:
        """The same single client: one workspace, one client per Cluster."""
        return [self.api(endpoint_name, "")]
