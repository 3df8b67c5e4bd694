"""Edge mode's hooks (``syncflow.app.modes``): a mailbox workspace's EdgeSyncConfigs and one p-cluster."""

from __future__ import annotations

from typing import Any

from redis import Redis

from syncflow.app.mode import Mode
from syncflow.config import Settings
from syncflow.kube.clients import cluster_client, for_cluster
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.base import tick
from syncflow.modes.edge.context import EdgeContext, config_key, edge_context
from syncflow.modes.edge.rules import KCP, PCLUSTER, EdgeRules
from syncflow.modes.edge.watcher import EdgeWatcher
from syncflow.queue.budget import RequestBudget
from syncflow.sync.endpoints import EndpointPair
from syncflow.sync.process import WatchProcess
from syncflow.sync.watches import Enqueue
from syncflow.sync.worker import RuleWorker


class EdgeMode(Mode):
    """Objects the mailbox's EdgeSyncConfigs select synced down to the p-cluster, reports up."""

    name = "edge"

    def rule_worker(self, settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
        """The engine's task bodies with edge mode's endpoints (one per process)."""
        return edge_context(settings, redis, budget).worker

    def watch_process(self, settings: Settings) -> WatchProcess:
        """The Lease and the state live in the p-cluster."""
        context = EdgeContext.watching(settings)
        mailbox = context.mailbox  # fails fast when the mailbox cannot be read
        pcluster = cluster_client(settings)

        def build(enqueue: Enqueue) -> EdgeWatcher:
            mailbox_api = JsonApi(for_cluster(context.kcp, mailbox.cluster))
            endpoints = EndpointPair(KCP, mailbox_api, PCLUSTER, JsonApi(pcluster))
            rules = EdgeRules(
                endpoints.upstream, endpoints.downstream, mailbox, settings.agent_name, settings.namespace
            )
            manager, bookmarks = context.sync_manager(rules.desired, endpoints, enqueue)
            return EdgeWatcher(endpoints.upstream.api, manager, enqueue, bookmarks, config_key(mailbox))

        return context.watch_process(pcluster, build)

    def beat_entries(self, settings: Settings) -> dict[str, dict[str, Any]]:
        """The EdgeSyncConfigs' status every status period."""
        return tick("edge-tick", settings.status_period)


MODE = EdgeMode()
