"""Periodic resync: per PublishedResource, list both sides once and enqueue only what needs work.

A kcp object whose local copy is missing or whose content drifted from the last-applied state (an
event was missed), and a local copy whose kcp object is not listed (a possible orphan), get a key in
the bulk lane. The sync task then decides with a direct GET: an
orphan's copy is deleted only if that GET confirms the kcp object is gone, never on the strength
of this list. Each PublishedResource is resynced every ``resync_period`` with ±10% jitter, so
resyncs of many PublishedResources spread out; beat ticks often and a Redis key per
PublishedResource says when its next resync is due (safe when two beats run).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable
from typing import Any

from redis import Redis

from syncflow.keys import ObjectKey
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.refs import ObjectRef
from syncflow.logs import log_event
from syncflow.modes.publish.keys import remote_ref, sync_key
from syncflow.queue.layout import agent_prefix
from syncflow.sync import state
from syncflow.sync.desired import managed_content
from syncflow.sync.metadata import AGENT_LABEL, STATE_SECRET_LABEL
from syncflow.sync.rule import SyncRule

logger = logging.getLogger("syncflow.resync")

JITTER = 0.1


def due(redis: Redis, agent: str, published: str, period: float) -> bool:
    """Whether the resync of ``published`` is due now; if so, schedule the next one (atomically)."""
    key = f"{agent_prefix(agent)}resync:{published}"
    next_in = period * random.uniform(1 - JITTER, 1 + JITTER)
    return bool(redis.set(key, int(time.time()), nx=True, px=int(next_in * 1000)))


def _list_all(api: JsonApi, path: str, **query: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    token = ""
    while True:
        page = api.get(path, limit="500", **query, **({"continue": token} if token else {}))
        items.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue", "")
        if not token:
            return items


def _drifted(
    rule: SyncRule, remote: list[dict[str, Any]], states: dict[str, dict[str, Any]]
) -> set[ObjectRef]:
    """kcp objects whose managed content differs from the last-applied state (missed events)."""
    drifted = set()
    for obj in remote:
        ref = ObjectRef.of(obj)
        secret = states.get(
            state.state_secret_name(
                ref.cluster, rule.remote.api_version, rule.remote.kind, ref.namespace, ref.name
            )
        )
        last = state.read_state(secret, state.state_key(ref.cluster, "", ref.namespace, ref.name))
        if last is not None and state.go_json(last) != state.go_json(managed_content(obj)):
            drifted.add(ref)
    return drifted


def keys_needing_work(rule: SyncRule, everywhere: JsonApi, service: JsonApi) -> set[ObjectKey]:
    """Keys of kcp objects without a copy or drifted from their state, and of copies whose kcp object
    was not listed (possible orphans)."""
    remote_objects = _list_all(everywhere, rule.remote.path())
    remote = {ObjectRef.of(obj) for obj in remote_objects}
    copies = {
        owner
        for obj in _list_all(service, rule.local.path(), labelSelector=f"{AGENT_LABEL}={rule.agent}")
        if (owner := remote_ref(obj)) is not None
    }
    secrets = _list_all(
        service,
        f"/api/v1/namespaces/{rule.state_namespace}/secrets",
        labelSelector=f"{STATE_SECRET_LABEL}=true",
    )
    states = {str(s["metadata"]["name"]): s for s in secrets}
    drifted = _drifted(rule, [o for o in remote_objects if ObjectRef.of(o) in copies], states)
    return {sync_key(rule.name, ref) for ref in (remote - copies) | (copies - remote) | drifted}


def resync(
    rules: Iterable[SyncRule],
    everywhere: JsonApi,
    service: JsonApi,
    enqueue: Callable[[set[ObjectKey]], object],
) -> int:
    """Enqueue (bulk) what each rule needs; returns the number of keys."""
    total = 0
    for rule in rules:
        found = keys_needing_work(rule, everywhere, service)
        if found:
            enqueue(found)
        total += len(found)
        log_event(logger, "resync.done", publishedresource=rule.name, enqueued=len(found))
    return total
