"""Clusters mode's control-plane tasks, each a keyed task (the key is the only argument).

- ``cluster/clusters/<ws>//<name>`` (control queue): probe one Cluster and record ``Ready``, or release
  it when deleted;
- ``crd/<type>/<ws>//<type>`` (control queue): negotiate one type's schema across the Ready clusters
  and pull it into kcp;
- ``split/deployments.apps/<ws>/<ns>/<name>``: bring one root's shards and status in line;
- ``rebalance/deployments.apps/<ws>//all``: split every root again (clusters came, went or changed);
- ``waiting/<type>/<ws>/<ns>/<name>``: say on an object why it waits for its Cluster.

``syncflow.clusters-tick`` (beat, every probe period) adds every Cluster's key, and every type's
``crd`` key once per ``CRD_EVERY`` probe periods (types can change in a cluster at any time). In a
syncer of one cluster, ``syncflow.clusters-heartbeat`` (beat, as often) records on its Cluster that it
runs: the central syncflow's ``Ready`` of a Pull or None mode Cluster requires it.
"""

from __future__ import annotations

import time

from syncflow.api.cluster import PATH
from syncflow.api.conditions import now
from syncflow.modes.clusters import negotiation, waiting
from syncflow.modes.clusters.context import ClustersContext, clusters_context
from syncflow.modes.clusters.identity import SyncedType
from syncflow.modes.clusters.splitter import split_key
from syncflow.modes.clusters.watcher import cluster_key, crd_key
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import CONTROL_QUEUE, PERIODIC_QUEUE, agent_prefix
from syncflow.tasks import app, keyed_task, periodic_task, runtime

CRD_EVERY = 6


def _context() -> ClustersContext:
    return clusters_context(runtime.settings, runtime.service.redis, runtime.service.budget)


@keyed_task("cluster", queue=CONTROL_QUEUE)
def cluster(key: ObjectKey) -> None:
    """Probe one Cluster and record its readiness (or release it when deleted)."""
    _context().controller.reconcile(key.name)


@keyed_task("crd", queue=CONTROL_QUEUE)
def crd(key: ObjectKey) -> None:
    """Negotiate one type across the Ready clusters; make kcp serve it (or widen it) when needed."""
    context, synced = _context(), SyncedType.parse(key.name)
    if synced in context.rules.types:  # a key left from before --resources changed: nothing to do
        negotiation.pull(context.workspace_api, context.endpoints.clusters, synced)


@keyed_task("split", queue="sync")
def split(key: ObjectKey) -> None:
    """Bring one root Deployment's shards and status in line."""
    _context().splitter.split(key.namespace, key.name)


@keyed_task("rebalance", queue="sync")
def rebalance(key: ObjectKey) -> None:
    """Split every root Deployment of the workspace again."""
    context = _context()
    roots = context.splitter.roots()
    keys = [split_key(key.cluster, r["metadata"]["namespace"], r["metadata"]["name"]) for r in roots]
    runtime.service.add_many(keys)


@keyed_task("waiting", queue="sync")
def waiting_task(key: ObjectKey) -> None:
    """Record on an object why it waits for its Cluster."""
    context = _context()
    waiting.report(
        context.rules,
        context.worker.registry,
        context.redis,
        SyncedType.parse(key.rule),
        key.namespace,
        key.name,
    )


@app.task(name="syncflow.clusters-tick", syncflow_queue=PERIODIC_QUEUE)  # type: ignore[untyped-decorator]
def tick() -> int:
    """Beat: probe every Cluster; now and then negotiate every type again."""
    context = _context()
    workspace = context.workspace
    keys = [
        cluster_key(workspace, c["metadata"]["name"])
        for c in context.workspace_api.get(PATH).get("items") or []
    ]
    period = runtime.settings.probe_period * CRD_EVERY
    guard = f"{agent_prefix(runtime.settings.agent_name)}crd-tick"
    if context.redis.set(guard, int(time.time()), nx=True, px=int(period * 1000)):
        keys += [crd_key(workspace, t) for t in context.rules.types]
    return runtime.service.add_many(keys)


@periodic_task("syncflow.clusters-heartbeat")
def heartbeat() -> str:
    """Beat, in a syncer of one cluster: say on its Cluster that it runs (the central syncflow's Ready
    of a Pull or None mode Cluster needs it)."""
    context, name = _context(), runtime.settings.only_cluster
    moment = now()
    status = {"status": {"lastSyncerHeartbeatTime": moment}}
    context.workspace_api.merge_patch(f"{PATH}/{name}/status", status)
    return moment
