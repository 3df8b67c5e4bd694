"""What workload mode's processes need, built once per process from the settings."""

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
from syncflow.modes.workload import target
from syncflow.modes.workload.rules import Workspace
from syncflow.modes.workload.status import StatusWriter
from syncflow.queue.budget import RequestBudget
from syncflow.queue.keys import ObjectKey
from syncflow.sync import trouble
from syncflow.sync.endpoints import EndpointPair


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
