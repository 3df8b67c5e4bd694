"""What edge mode's processes need, built once per process from the settings."""

from __future__ import annotations

from functools import cached_property

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow import tasks
from syncflow.config import ConfigError, Settings
from syncflow.kube.clients import cluster_client, for_cluster
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.modes.base import ModeContext, context_of
from syncflow.modes.edge.rules import EDGE_SYNC_CONFIGS, KCP, PCLUSTER, EdgeRules, Mailbox
from syncflow.modes.edge.status import EdgeConfigs
from syncflow.queue.budget import RequestBudget
from syncflow.queue.keys import ObjectKey
from syncflow.sync.endpoints import EndpointPair


def find_mailbox(kcp: ApiClient, settings: Settings) -> Mailbox:
    """The mailbox workspace's logical cluster; ``ConfigError`` when it cannot be read."""
    if not settings.workspace_cluster or not settings.kcp_kubeconfig:
        raise ConfigError("edge mode needs --workspace (the mailbox workspace) and --kcp-kubeconfig")
    api = JsonApi(for_cluster(kcp, settings.workspace_cluster))
    try:
        cluster, _ = cluster_identity(api)
        api.get(EDGE_SYNC_CONFIGS)
    except ApiException as exc:
        raise ConfigError(
            f"cannot read EdgeSyncConfigs in the mailbox workspace {settings.workspace_cluster} "
            f"({exc.status} {exc.reason}): check --workspace, the kubeconfig's rights, and that the "
            "EdgeSyncConfig CRD is installed there (syncflow edge bootstrap does it)"
        ) from None
    return Mailbox(cluster=cluster, syncer=settings.agent_name)


def config_key(mailbox: Mailbox) -> ObjectKey:
    """The key that records every EdgeSyncConfig's status."""
    return ObjectKey("edgeconfig", mailbox.syncer, mailbox.cluster, "", mailbox.syncer)


class EdgeContext(ModeContext):
    """Clients for the mailbox workspace and the p-cluster."""

    @cached_property
    def mailbox(self) -> Mailbox:
        """The mailbox workspace (checked once per process)."""
        return find_mailbox(self.kcp, self.settings)

    @cached_property
    def endpoints(self) -> EndpointPair:
        """The engine's view of the two sides: ``kcp`` the mailbox workspace, ``pcluster`` the p-cluster."""
        return EndpointPair(
            KCP,
            self.client(for_cluster(self.kcp, self.mailbox.cluster), KCP),
            PCLUSTER,
            self.client(cluster_client(self.settings), PCLUSTER),
        )

    @cached_property
    def configs(self) -> EdgeConfigs:
        """The EdgeSyncConfigs' status and lifecycle."""
        endpoints, settings = self.endpoints, self.settings
        rules = EdgeRules(
            endpoints.upstream, endpoints.downstream, self.mailbox, settings.agent_name, settings.namespace
        )
        return EdgeConfigs(endpoints.upstream, rules, self.worker, tasks.runtime.service)


def edge_context(settings: Settings, redis: Redis, budget: RequestBudget | None = None) -> EdgeContext:
    """The context of these settings in this process."""
    return context_of(EdgeContext, settings, redis, budget)
