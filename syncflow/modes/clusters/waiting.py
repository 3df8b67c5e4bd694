"""Objects labelled for a Cluster that is unknown, not Ready or cannot take their type (``waiting/…``
keys): they stay as they are, and a Warning Event on each says why, at most once per reason per
``EVENT_EVERY`` seconds. The rule becomes ready when the Cluster does, and its watch picks them up.
"""

from __future__ import annotations

from redis import Redis

from syncflow.api.cluster import PATH
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.clusters.identity import CLUSTER_LABEL, SyncedType
from syncflow.modes.clusters.rules import ClustersRules, syncs
from syncflow.queue.layout import agent_prefix
from syncflow.sync.events import record_event
from syncflow.sync.reconciler import get_or_none
from syncflow.sync.registry import RuleRegistry

EVENT_EVERY = 600


def why_waiting(kcp: JsonApi, registry: RuleRegistry, t: SyncedType, cluster: str) -> tuple[str, str] | None:
    """(reason, message) when objects of ``t`` labelled for ``cluster`` cannot sync now, else None."""
    entry = registry.lookup(t.rule_name(cluster))
    if entry.state == "ready":
        return None
    obj = get_or_none(kcp, f"{PATH}/{cluster}")
    if obj is None:
        return (
            "ClusterNotFound",
            f'no Cluster "{cluster}" in this workspace: the object waits until one is created',
        )
    if not syncs(obj, None):
        return None  # a syncer of its own (pull, or run by hand) syncs it
    return "ClusterNotReady", f"waiting for Cluster {cluster}: {entry.reason or entry.state}"


def report(
    rules: ClustersRules, registry: RuleRegistry, redis: Redis, t: SyncedType, namespace: str, name: str
) -> bool:
    """Record why one object waits (if it does); True when an Event was recorded."""
    version = rules.preferred_version(t)
    resource = rules.resource(t, version) if version else None
    obj = get_or_none(rules.kcp, resource.path(namespace, name)) if resource else None
    cluster = ((obj or {}).get("metadata", {}).get("labels") or {}).get(CLUSTER_LABEL)
    if obj is None or not cluster:
        return False
    why = why_waiting(rules.kcp, registry, t, cluster)
    if why is None:
        return False
    guard = f"{agent_prefix(rules.agent)}waiting:{obj['metadata']['uid']}:{why[0]}"
    if not redis.set(guard, 1, nx=True, ex=EVENT_EVERY):
        return False
    record_event(rules.kcp, obj, *why)
    return True
