"""The kcp workspace a bootstrap registers a syncer in: the one named, or the kubeconfig's own."""

from __future__ import annotations

from dataclasses import dataclass

from kubernetes.client import ApiClient

from syncflow.bootstrap.errors import BootstrapError, explained
from syncflow.kube.clients import for_cluster
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity


@dataclass(frozen=True)
class Workspace:
    """A workspace as the operator reaches it."""

    api: JsonApi
    cluster: str
    """Its logical cluster name."""
    path: str
    """Its path, e.g. ``root:org:ws``."""


def open_workspace(kcp: ApiClient, workspace: str | None) -> Workspace:
    """Workspace ``workspace`` (a path or logical cluster name), or the one ``kcp``'s URL points at."""
    api = JsonApi(for_cluster(kcp, workspace) if workspace else kcp)
    where = workspace or api.host
    try:
        with explained("reading the workspace", where, api.host):
            cluster, path = cluster_identity(api)
    except BootstrapError as exc:
        raise BootstrapError(f"{exc} (is {where} a kcp workspace? name it with --workspace)") from None
    return Workspace(api, cluster, path)
