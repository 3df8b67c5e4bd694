"""Clusters mode's hooks (``syncflow.app.modes``): kcp's multi-cluster controllers over Cluster objects."""

from __future__ import annotations

from typing import Any

from redis import Redis

from syncflow.app.mode import Mode
from syncflow.config import Settings
from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.base import tick
from syncflow.modes.clusters.context import ClustersContext, clusters_context, endpoints_of, rules_of
from syncflow.modes.clusters.watcher import ClustersWatcher
from syncflow.queue.budget import RequestBudget
from syncflow.sync.process import WatchProcess
from syncflow.sync.watches import Enqueue
from syncflow.sync.worker import RuleWorker


class ClustersMode(Mode):
    """A workspace's objects placed on its Clusters (or, with ``--only-cluster``, on the one this syncer
    runs in)."""

    name = "clusters"

    def rule_worker(self, settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
        """The engine's task bodies with clusters mode's endpoints (one per process)."""
        return clusters_context(settings, redis, budget).worker

    def watch_process(self, settings: Settings) -> WatchProcess:
        """The Lease lives in the workspace (in the cluster for a syncer of one cluster)."""
        context = ClustersContext.watching(settings)
        workspace = JsonApi(for_cluster(context.kcp, context.workspace))  # fails fast on a bad workspace
        lease = load_client(settings.kubeconfig) if settings.only_cluster else workspace.api

        def build(enqueue: Enqueue) -> ClustersWatcher:
            rules = rules_of(settings, workspace, context.workspace)
            endpoints = endpoints_of(settings, workspace, lambda api, endpoint: JsonApi(api))
            manager, bookmarks = context.sync_manager(rules.desired, endpoints, enqueue)
            central = settings.only_cluster is None
            return ClustersWatcher(workspace.api, rules, manager, enqueue, bookmarks, central=central)

        return context.watch_process(lease, build)

    def next_to_cluster(self, settings: Settings) -> bool:
        """Only a syncer of one cluster (``--only-cluster``) runs next to a cluster; the central syncflow
        reaches every Cluster through its kubeconfig in kcp."""
        return settings.only_cluster is not None

    def beat_entries(self, settings: Settings) -> dict[str, dict[str, Any]]:
        """The central syncflow probes every Cluster each probe period; a syncer in a cluster
        (``--only-cluster``) heartbeats on its Cluster as often, so Ready means it runs."""
        if settings.only_cluster is not None:
            return tick("clusters-heartbeat", settings.probe_period)
        return tick("clusters-tick", settings.probe_period)


MODE = ClustersMode()
