"""Workload mode's hooks (``syncflow.app.modes``): kcp's TMC syncer of one SyncTarget."""

from __future__ import annotations

from typing import Any

from redis import Redis

from syncflow.app.mode import Mode
from syncflow.config import Settings
from syncflow.kube.clients import cluster_client, for_cluster
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.base import tick
from syncflow.modes.workload import target
from syncflow.modes.workload.context import WorkloadContext, control_key, workload_context
from syncflow.modes.workload.rules import WorkloadRules
from syncflow.modes.workload.watcher import WorkloadWatcher
from syncflow.queue.budget import RequestBudget
from syncflow.sync.endpoints import EndpointPair
from syncflow.sync.process import WatchProcess
from syncflow.sync.watches import Enqueue
from syncflow.sync.worker import RuleWorker


class WorkloadMode(Mode):
    """A SyncTarget's workspace synced down to its physical cluster, status back up."""

    name = "workload"

    def rule_worker(self, settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
        """The engine's task bodies with workload mode's endpoints (one per process)."""
        return workload_context(settings, redis, budget).worker

    def watch_process(self, settings: Settings) -> WatchProcess:
        """The Lease and the state live in the physical cluster."""
        context = WorkloadContext.watching(settings)
        workspace = context.workspace  # fails fast on a missing SyncTarget or a wrong UID
        physical = cluster_client(settings)

        def build(enqueue: Enqueue) -> WorkloadWatcher:
            workspace_api = JsonApi(for_cluster(context.kcp, workspace.cluster))
            endpoints = EndpointPair(target.KCP, workspace_api, target.CLUSTER, JsonApi(physical))
            rules = WorkloadRules(
                endpoints.upstream, endpoints.downstream, workspace, settings.agent_name, settings.namespace
            )
            manager, bookmarks = context.sync_manager(rules.desired, endpoints, enqueue)
            keys = [control_key("synctarget", workspace)]
            return WorkloadWatcher(endpoints.upstream.api, workspace, manager, enqueue, bookmarks, keys)

        return context.watch_process(physical, build)

    def beat_entries(self, settings: Settings) -> dict[str, dict[str, Any]]:
        """The SyncTarget's heartbeat, type discovery and namespace cleanup every heartbeat period."""
        return tick("workload-tick", settings.heartbeat_period)


MODE = WorkloadMode()
