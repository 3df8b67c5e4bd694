"""What clusters mode's processes need, built once per process from the settings."""

from __future__ import annotations

from functools import cached_property

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow import tasks
from syncflow.config import ConfigError, Settings
from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.modes.base import ModeContext, context_of
from syncflow.modes.clusters import clients
from syncflow.modes.clusters.clients import ClustersEndpoints
from syncflow.modes.clusters.controller import ClusterController
from syncflow.modes.clusters.identity import KCP, SyncedType, endpoint
from syncflow.modes.clusters.rules import ClustersRules
from syncflow.modes.clusters.splitter import Splitter
from syncflow.queue.budget import RequestBudget
from syncflow.sync.endpoints import ClientCache


def find_workspace(kcp: ApiClient, settings: Settings) -> str:
    """The logical cluster of ``--workspace-cluster``; ``ConfigError`` when it is missing or unreachable."""
    if not settings.workspace_cluster or not settings.kcp_kubeconfig:
        raise ConfigError("clusters mode needs --workspace-cluster and --kcp-kubeconfig")
    try:
        name, _ = cluster_identity(JsonApi(for_cluster(kcp, settings.workspace_cluster)))
    except ApiException as exc:
        raise ConfigError(
            f"workspace {settings.workspace_cluster}: {exc.status} {exc.reason} (check --workspace-cluster)"
        ) from None
    return name


def endpoints_of(settings: Settings, workspace: JsonApi, client_of: clients.ClientOf) -> ClustersEndpoints:
    """The workspace and the Clusters (or, with ``--only-cluster``, the one this syncer runs in)."""
    only = settings.only_cluster
    if only is None:
        loader = clients.from_clusters(
            workspace, client_of, allow_link_local=settings.allow_link_local_servers
        )
        return ClustersEndpoints(workspace, ClientCache(loader))
    own = client_of(load_client(settings.kubeconfig), endpoint(only))
    return ClustersEndpoints(workspace, ClientCache(clients.only(only, own)))


def rules_of(settings: Settings, workspace: JsonApi, cluster: str) -> ClustersRules:
    """The rules builder over ``workspace`` (logical cluster ``cluster``)."""
    types = [SyncedType.parse(text) for text in settings.cluster_resources]
    return ClustersRules(
        workspace,
        cluster,
        settings.agent_name,
        settings.namespace,
        types,
        settings.only_cluster,
        settings.cluster_cleanup,
    )


class ClustersContext(ModeContext):
    """Clients of the workspace and of every Cluster, and the mode's parts built on them."""

    @cached_property
    def workspace(self) -> str:
        """The workspace's logical cluster (checked once per process)."""
        return find_workspace(self.kcp, self.settings)

    @cached_property
    def workspace_api(self) -> JsonApi:
        """The workspace of the Clusters and of the objects to sync."""
        return self.client(for_cluster(self.kcp, self.workspace), KCP)

    @cached_property
    def endpoints(self) -> ClustersEndpoints:
        """The endpoints of this worker process (request budgets shared by every worker)."""
        return endpoints_of(self.settings, self.workspace_api, self.client)

    @cached_property
    def rules(self) -> ClustersRules:
        """The rules builder of this process."""
        return rules_of(self.settings, self.workspace_api, self.workspace)

    @cached_property
    def controller(self) -> ClusterController:
        """The cluster controller."""
        return ClusterController(
            self.workspace_api,
            self.endpoints,
            self.worker,
            self.rules,
            self.settings.cluster_cleanup,
            tasks.runtime.service,
            HEARTBEATS_MISSED * self.settings.probe_period,
        )

    @cached_property
    def splitter(self) -> Splitter:
        """The Deployment splitter."""
        return Splitter(self.workspace_api)


def clusters_context(
    settings: Settings, redis: Redis, budget: RequestBudget | None = None
) -> ClustersContext:
    """The context of these settings in this process."""
    return context_of(ClustersContext, settings, redis, budget)


HEARTBEATS_MISSED = 3
"""Probe periods without a heartbeat after which the syncer of a Pull or None mode Cluster counts as gone."""
