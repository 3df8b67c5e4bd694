"""Downstream namespaces of the namespace mapping: removed once empty and gone upstream.

A ``kcp-<hash>`` namespace is created on demand by the first copy synced into it. It is deleted when
its upstream namespace no longer exists and no copy of ours is left in it, after it has been found so
for ``clean_delay`` seconds (TMC's ``--downstream-namespace-clean-delay``: a namespace re-created
upstream meanwhile keeps its downstream one).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable

from redis import Redis

from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.workload.rules import Workspace
from syncflow.queue.layout import agent_prefix
from syncflow.sync.metadata import AGENT_LABEL
from syncflow.sync.rule import NamespaceMapping, Resource
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.workload")


def _upstream_namespace(annotation: str | None, workspace: Workspace) -> str | None:
    """The upstream namespace of a mapped namespace of this SyncTarget (None: not ours)."""
    try:
        locator = json.loads(annotation or "")
    except ValueError:
        return None
    if not isinstance(locator, dict) or locator.get("syncTarget", {}).get("uid") != workspace.uid:
        return None
    namespace = locator.get("namespace")
    return namespace if isinstance(namespace, str) else None


def collect(
    kcp: JsonApi,
    physical: JsonApi,
    workspace: Workspace,
    resources: Iterable[Resource],
    agent: str,
    redis: Redis,
    clean_delay: float,
) -> list[str]:
    """Delete mapped namespaces that are empty and gone upstream; returns the deleted names."""
    annotation = NamespaceMapping().locator_annotation
    namespaced = [r for r in resources if r.namespaced]
    deleted = []
    upstream_names: set[str] | None = None  # kcp's namespaces, listed once when a mapped one is seen
    for namespace in physical.get("/api/v1/namespaces").get("items") or []:
        meta = namespace["metadata"]
        upstream = _upstream_namespace((meta.get("annotations") or {}).get(annotation), workspace)
        if upstream is None or meta.get("deletionTimestamp"):
            continue
        if upstream_names is None:
            upstream_names = {
                item["metadata"]["name"] for item in kcp.get("/api/v1/namespaces").get("items") or []
            }
        marker = f"{agent_prefix(agent)}ns-empty:{meta['name']}"
        if upstream in upstream_names or any(
            physical.get(r.path(meta["name"]), labelSelector=f"{AGENT_LABEL}={agent}", limit="1").get("items")
            for r in namespaced
        ):
            redis.delete(marker)
            continue
        first_seen = float(redis.get(marker) or 0) or None
        if first_seen is None:
            redis.set(marker, time.time(), ex=int(clean_delay * 10) + 60)
            continue
        if time.time() - first_seen < clean_delay:
            continue
        physical.delete(f"/api/v1/namespaces/{meta['name']}", {"preconditions": {"uid": meta["uid"]}})
        redis.delete(marker)
        deleted.append(meta["name"])
        log_event(logger, "workload.namespace_deleted", namespace=meta["name"], upstream=upstream)
    return deleted
