"""What clusters mode's processes need, built once per process from the settings."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow import tasks
from syncflow.config import ConfigError, Settings
from syncflow.keys import ObjectKey
from syncflow.kube.bookmarks import RedisBookmarks
from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.modes.clusters import clients
from syncflow.modes.clusters.clients import ClustersEndpoints
from syncflow.modes.clusters.controller import ClusterController
from syncflow.modes.clusters.identity import KCP, SyncedType
from syncflow.modes.clusters.rules import ClustersRules
from syncflow.modes.clusters.splitter import Splitter
from syncflow.modes.clusters.watcher import ClustersWatcher
from syncflow.queue.budget import RequestBudget
from syncflow.queue.layout import PERIODIC_QUEUE, agent_prefix
from syncflow.sync.echoes import OwnWrites
from syncflow.sync.endpoints import ClientCache
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.process import WatchProcess
from syncflow.sync.registry import RuleRegistry
from syncflow.sync.worker import RuleWorker


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


@dataclass
class ClustersContext:
    """Clients of the workspace and of every Cluster, and the mode's parts built on them."""

    settings: Settings
    redis: Redis
    budget: RequestBudget | None = None

    def _budget(self, endpoint: str) -> Callable[[], None] | None:
        budget = self.budget
        return (lambda: budget.take(endpoint)) if budget is not None else None

    @cached_property
    def kcp_client(self) -> ApiClient:
        """The client of the kcp kubeconfig."""
        return load_client(self.settings.kcp_kubeconfig)

    @cached_property
    def workspace(self) -> str:
        """The workspace's logical cluster (checked once per process)."""
        return find_workspace(self.kcp_client, self.settings)

    @cached_property
    def kcp(self) -> JsonApi:
        """The workspace of the Clusters and of the objects to sync."""
        return JsonApi(for_cluster(self.kcp_client, self.workspace), before_request=self._budget(KCP))

    @cached_property
    def types(self) -> list[SyncedType]:
        """The types to sync (``--cluster-resources``)."""
        return [SyncedType.parse(text) for text in self.settings.cluster_resources]

    def endpoints(self, kcp: JsonApi, budget: clients.Budget) -> ClustersEndpoints:
        """The workspace and the Clusters (or, with ``--only-cluster``, the one this syncer runs in)."""
        only = self.settings.only_cluster
        if only is None:
            return ClustersEndpoints(kcp, ClientCache(clients.from_clusters(kcp, budget)))
        own = JsonApi(load_client(self.settings.kubeconfig), before_request=budget(only))
        return ClustersEndpoints(kcp, ClientCache(clients.only(only, own)))

    def rules(self, kcp: JsonApi) -> ClustersRules:
        """The rules builder over ``kcp``."""
        settings = self.settings
        return ClustersRules(
            kcp, self.workspace, settings.agent_name, settings.namespace, self.types, settings.only_cluster
        )

    @cached_property
    def worker_endpoints(self) -> ClustersEndpoints:
        """The endpoints of this worker process (request budgets shared by every worker)."""
        return self.endpoints(self.kcp, self._budget)

    @cached_property
    def worker(self) -> RuleWorker:
        """The engine's task bodies."""
        return RuleWorker(
            RuleRegistry(self.redis, self.settings.agent_name),
            self.worker_endpoints,
            OwnWrites(self.redis, self.settings.agent_name),
        )

    @cached_property
    def worker_rules(self) -> ClustersRules:
        """The rules builder of this worker process."""
        return self.rules(self.kcp)

    @cached_property
    def controller(self) -> ClusterController:
        """The cluster controller."""
        return ClusterController(
            self.kcp, self.worker_endpoints, self.worker, self.worker_rules, self.settings.cluster_cleanup
        )

    @cached_property
    def splitter(self) -> Splitter:
        """The Deployment splitter."""
        return Splitter(self.kcp)


_contexts: dict[int, ClustersContext] = {}


def clusters_context(
    settings: Settings, redis: Redis, budget: RequestBudget | None = None
) -> ClustersContext:
    """The context of these settings in this process."""
    context = _contexts.get(id(settings))
    if context is None or context.settings is not settings:
        context = _contexts[id(settings)] = ClustersContext(settings, redis, budget)
    return context


def rule_worker(settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
    """The engine's task bodies with clusters mode's endpoints (one per process)."""
    return clusters_context(settings, redis, budget).worker


def beat_entries(settings: Settings) -> dict[str, dict[str, Any]]:
    """Beat: probe every Cluster each probe period (the central syncflow only)."""
    if settings.only_cluster is not None:
        return {}
    return {
        "clusters-tick": {
            "task": "syncflow.clusters-tick",
            "schedule": settings.probe_period,
            "options": {"queue": PERIODIC_QUEUE, "expires": settings.probe_period},
        }
    }


def watch_process(settings: Settings) -> WatchProcess:
    """``syncflow watch`` in clusters mode: the Lease lives in the workspace (in the cluster for a
    syncer of one cluster)."""
    tasks.bind(settings)
    redis = tasks.runtime.service.redis
    context = ClustersContext(settings, redis)
    kcp = JsonApi(for_cluster(context.kcp_client, context.workspace))  # fails fast on a bad workspace
    lease = load_client(settings.kubeconfig) if settings.only_cluster else kcp.api

    def build(enqueue: Callable[[Iterable[ObjectKey], bool], None]) -> ClustersWatcher:
        rules = context.rules(kcp)
        bookmarks = RedisBookmarks(redis, agent_prefix(settings.agent_name) + "watch")
        manager = SyncManager(
            rules.desired,
            RuleRegistry(redis, settings.agent_name),
            context.endpoints(kcp, lambda endpoint: None),
            enqueue,
            bookmarks,
            OwnWrites(redis, settings.agent_name),
        )
        central = settings.only_cluster is None
        return ClustersWatcher(kcp.api, rules, manager, enqueue, bookmarks, central=central)

    return WatchProcess(settings, lease, build)
