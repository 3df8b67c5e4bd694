"""A ``Reader`` for a configured agent: its queue service (``syncflow.tasks``' runtime, so replays
publish through Celery), its Lease, its workers, its metrics endpoints and the mode's endpoints."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from kubernetes.client import ApiClient

from syncflow import tasks
from syncflow.app import modes
from syncflow.config import Settings
from syncflow.console.agent import ping_workers, read_leader
from syncflow.console.filters import Scope
from syncflow.console.reader import Agent, Reader
from syncflow.console.sides import Sides
from syncflow.kube.clients import cluster_client, for_cluster, kcp_client


def _lease_client(settings: Settings) -> ApiClient:
    """Where the leader Lease lives: the cluster the agent runs next to, else (clusters mode's central
    agent) its workspace in kcp."""
    if modes.next_to_cluster(settings):
        return cluster_client(settings)
    return for_cluster(kcp_client(settings), settings.workspace_cluster or "")


def build_reader(
    settings: Settings,
    *,
    scope: Scope,
    metrics_urls: Sequence[str] = (),
    flower_url: str = "",
    with_sides: bool = True,
) -> Reader:
    """The console's reader of the agent ``settings`` configure."""
    tasks.bind(settings)
    service = tasks.runtime.service
    lease = functools.cache(functools.partial(_lease_client, settings))
    agent = Agent(
        leader=functools.partial(read_leader, lease, settings.namespace, settings.agent_name),
        workers=functools.partial(ping_workers, lambda timeout: tasks.app.control.ping(timeout=timeout)),
        metrics_urls=tuple(metrics_urls),
    )
    sides = Sides(lambda: modes.rule_worker(settings, service.redis, None)) if with_sides else None
    return Reader(service, scope, agent, sides, flower_url)
