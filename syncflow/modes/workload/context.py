"""What workload mode's processes need, built once per process from the settings."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow import tasks
from syncflow.config import ConfigError, Settings
from syncflow.kube.clients import cluster_client, for_cluster
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.modes.base import ModeContext, context_of, sync_manager, tick
from syncflow.modes.workload import target
from syncflow.modes.workload.rules import WorkloadRules, Workspace
from syncflow.modes.workload.status import StatusWriter
from syncflow.modes.workload.watcher import WorkloadWatcher
from syncflow.queue.budget import RequestBudget
from syncflow.queue.keys import ObjectKey
from syncflow.sync import trouble
from syncflow.sync.endpoints import EndpointPair
from syncflow.sync.process import WatchProcess
from syncflow.sync.watches import Enqueue
from syncflow.sync.worker import RuleWorker


def _required(settings: Settings) -> tuple[str, str]:
    missing = [
        flag
        for flag, value in (
            ("--sync-target-name", settings.sync_target_name),
            ("--sync-target-uid", settings.sync_target_uid),
            ("--workspace-cluster", settings.workspace_cluster),
            ("--kcp-kubeconfig", settings.kcp_kubeconfig),
        )
        if not value
    ]
    if missing:
        raise ConfigError(f"workload mode needs {', '.join(missing)}")
    assert settings.sync_target_name and settings.workspace_cluster
    return settings.sync_target_name, settings.workspace_cluster


def find_workspace(kcp: ApiClient, settings: Settings) -> Workspace:
    """The SyncTarget's workspace and identity; ``ConfigError`` when it is missing or its UID differs."""
    name, workspace_cluster = _required(settings)
    api = JsonApi(for_cluster(kcp, workspace_cluster))
    try:
        cluster, path = cluster_identity(api)
        found = api.get(f"{target.SYNC_TARGETS}/{name}")
    except ApiException as exc:
        if exc.status in (403, 404):
            raise ConfigError(
                f'SyncTarget "{name}" not found in workspace {workspace_cluster} '
                f"({exc.status} {exc.reason}); create it (syncflow workload sync) or check "
                "--workspace-cluster and --sync-target-name"
            ) from None
        raise
    uid = found["metadata"]["uid"]
    if settings.sync_target_uid != uid:
        raise ConfigError(
            f'SyncTarget "{name}" in {path} has UID {uid}, not {settings.sync_target_uid} '
            "(--sync-target-uid): it was deleted and re-created; regenerate the syncer manifest"
        )
    return Workspace(cluster=cluster, path=path, sync_target=name, uid=uid)


def control_key(verb: str, workspace: Workspace) -> ObjectKey:
    """A SyncTarget-wide key: ``<verb>/<synctarget>/<cluster>//<synctarget>``."""
    return ObjectKey(verb, workspace.sync_target, workspace.cluster, "", workspace.sync_target)


class WorkloadContext(ModeContext):
    """Clients for the workspace and the physical cluster, and the SyncTarget's identity."""

    @cached_property
    def workspace(self) -> Workspace:
        """The SyncTarget's workspace (checked once per process)."""
        return find_workspace(self.kcp, self.settings)

    @cached_property
    def endpoints(self) -> EndpointPair:
        """The engine's view of the two sides: ``kcp`` the SyncTarget's workspace, ``cluster`` the
        physical cluster."""
        return EndpointPair(
            target.KCP,
            self.client(for_cluster(self.kcp, self.workspace.cluster), target.KCP),
            target.CLUSTER,
            self.client(cluster_client(self.settings), target.CLUSTER),
        )

    @cached_property
    def status(self) -> StatusWriter:
        """The SyncTarget's status writer."""
        endpoints = self.endpoints
        registry = self.worker.registry

        def troubles() -> trouble.Trouble:
            names = [rule.name for rule in registry.ready_rules()]
            return trouble.total(trouble.troubles(tasks.runtime.service, names), names)

        return StatusWriter(
            endpoints.upstream,
            endpoints.downstream,
            self.workspace,
            self.redis,
            self.settings.agent_name,
            troubles,
        )


def workload_context(
    settings: Settings, redis: Redis, budget: RequestBudget | None = None
) -> WorkloadContext:
    """The context of these settings in this process."""
    return context_of(WorkloadContext, settings, redis, budget)


def rule_worker(settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
    """The engine's task bodies with workload mode's endpoints (one per process)."""
    return workload_context(settings, redis, budget).worker


def beat_entries(settings: Settings) -> dict[str, dict[str, Any]]:
    """Beat: the SyncTarget's heartbeat, type discovery and namespace cleanup every heartbeat period."""
    return tick("workload-tick", settings.heartbeat_period)


def watch_process(settings: Settings) -> WatchProcess:
    """``syncflow watch`` in workload mode: the Lease and the state live in the physical cluster."""
    tasks.bind(settings)
    redis = tasks.runtime.service.redis
    context = WorkloadContext(settings, redis)
    workspace = context.workspace  # fails fast on a missing SyncTarget or a wrong UID
    physical = cluster_client(settings)

    def build(enqueue: Enqueue) -> WorkloadWatcher:
        workspace_api = JsonApi(for_cluster(context.kcp, workspace.cluster))
        endpoints = EndpointPair(target.KCP, workspace_api, target.CLUSTER, JsonApi(physical))
        rules = WorkloadRules(
            endpoints.upstream, endpoints.downstream, workspace, settings.agent_name, settings.namespace
        )
        manager, bookmarks = sync_manager(settings, redis, rules.desired, endpoints, enqueue)
        keys = [control_key("synctarget", workspace)]
        return WorkloadWatcher(endpoints.upstream.api, workspace, manager, enqueue, bookmarks, keys)

    return WatchProcess(settings, physical, build, tasks.runtime.service)
