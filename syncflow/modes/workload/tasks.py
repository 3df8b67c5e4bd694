"""Workload mode's control-plane tasks: type discovery, heartbeats and namespace cleanup.

``syncflow.workload-tick`` (beat, every heartbeat period) adds three SyncTarget-wide keys; each is
keyed work on the ``control`` queue, so a flood of object events never delays a heartbeat:
``synctarget/…`` holds syncflow's finalizer on the SyncTarget (releasing every rule when it is being
deleted), checks the types to sync and records them in ``status.syncedResources`` (the watcher
turns the Accepted ones into rules), ``heartbeat/…`` sends the heartbeat, ``namespaces/…`` removes
mapped namespaces that are empty and gone upstream.
"""

from __future__ import annotations

from syncflow.modes.workload import namespaces
from syncflow.modes.workload.context import WorkloadContext, control_key, workload_context
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import CONTROL_QUEUE
from syncflow.sync import owners
from syncflow.tasks import keyed_task, periodic_task, runtime

TICK_VERBS = ("synctarget", "heartbeat", "namespaces")


def _context() -> WorkloadContext:
    return workload_context(runtime.settings, runtime.service.redis, runtime.service.budget)


@keyed_task("synctarget", queue=CONTROL_QUEUE)
def synctarget(key: ObjectKey) -> None:
    """Check every type to sync against both sides; record it in the SyncTarget's status. Once the
    SyncTarget is being deleted, release every rule (copies deleted where the physical cluster answers)
    before its deletion completes."""
    context = _context()
    worker = context.worker
    if owners.settle(
        context.endpoints.upstream, context.status.path, lambda: worker.retire(worker.known_rules())
    ):
        return
    context.status.record_resources(runtime.settings.workload_resources)


@keyed_task("heartbeat", queue=CONTROL_QUEUE)
def heartbeat(key: ObjectKey) -> None:
    """Send this period's heartbeat (at most one per period)."""
    _context().status.heartbeat(runtime.settings.heartbeat_period)


@keyed_task("namespaces", queue=CONTROL_QUEUE)
def namespaces_task(key: ObjectKey) -> None:
    """Remove mapped namespaces that are empty and gone upstream."""
    context = _context()
    endpoints = context.endpoints
    resources = [rule.target.resource for rule in context.worker.registry.ready_rules()]
    namespaces.collect(
        endpoints.upstream,
        endpoints.downstream,
        context.workspace,
        resources,
        runtime.settings.agent_name,
        context.redis,
        runtime.settings.namespace_clean_delay,
    )


@periodic_task("syncflow.workload-tick")
def tick() -> int:
    """Beat: enqueue the SyncTarget's discovery, heartbeat and namespace cleanup."""
    workspace = _context().workspace
    return runtime.service.add_many([control_key(verb, workspace) for verb in TICK_VERBS])
