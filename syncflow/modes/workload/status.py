"""The SyncTarget's status as the syncer keeps it: resource types to sync, heartbeats and conditions.

Heartbeats: every ``heartbeat_period`` beat enqueues the heartbeat key; the run probes the physical
cluster, then writes one status patch (heartbeat count and errors, ``lastHeartbeatTime``, conditions
``SyncerReady``, ``HeartbeatReady``, ``Ready``). A time-bucket guard in Redis makes a second run in the
same period (two beats, a retry after a lost reply) count nothing; a failed patch retries after a
jittered, growing delay within the period, never in lockstep with other syncers.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow.api.conditions import now, set_condition
from syncflow.api.synctarget import SyncTarget
from syncflow.kube.jsonapi import JsonApi
from syncflow.metrics import record as metrics
from syncflow.modes.workload import discovery, target
from syncflow.modes.workload.rules import Workspace
from syncflow.queue.errors import RequeueAfter, describe
from syncflow.queue.layout import agent_prefix
from syncflow.sync import trouble
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.workload")

Obj = dict[str, Any]
PROBE_TIMEOUT = (3.0, 5.0)


@dataclass(frozen=True)
class StatusWriter:
    """Writes one SyncTarget's status."""

    kcp: JsonApi
    physical: JsonApi
    workspace: Workspace
    redis: Redis
    agent: str
    troubles: Callable[[], trouble.Trouble] = trouble.Trouble
    """The parked objects of the SyncTarget's rules (``Conflicts`` and ``Parked``, with each heartbeat)."""

    @property
    def path(self) -> str:
        """The SyncTarget's path in its workspace."""
        return f"{target.SYNC_TARGETS}/{self.workspace.sync_target}"

    def _patch(self, current: Obj, status: Obj) -> None:
        patch = {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]}, "status": status}
        self.kcp.merge_patch(f"{self.path}/status", patch)

    def record_resources(self, defaults: list[str]) -> list[discovery.TypeCheck]:
        """Check every type to sync against both sides and record the result in ``status.syncedResources``."""
        current = self.kcp.get(self.path)
        checks = [
            discovery.check(self.kcp, self.physical, ref)
            for ref in discovery.wanted_types(
                self.kcp, self.workspace.path, SyncTarget.parse(current), defaults
            )
        ]
        entries = [c.status_entry() for c in checks]
        if (current.get("status") or {}).get("syncedResources") != entries:
            self._patch(current, {"syncedResources": entries})
            for check in checks:
                log_event(
                    logger,
                    "workload.resource",
                    synctarget=self.workspace.sync_target,
                    resource=check.ref.group_resource,
                    state=check.state,
                    message=check.message,
                )
        return checks

    def _guard(self) -> str:
        return f"{agent_prefix(self.agent)}heartbeat:{self.workspace.sync_target}"

    def probe(self) -> str | None:
        """None when the physical cluster answers, else why not (one line)."""
        try:
            JsonApi(self.physical.api, timeout=PROBE_TIMEOUT).request("GET", "/version")
        except Exception as exc:  # any failure to answer is what a heartbeat reports
            return f"{type(exc).__name__}: {describe(exc)}"[:512]
        return None

    def heartbeat(self, period: float) -> bool:
        """Send this period's heartbeat; False if it was already sent."""
        bucket = str(int(time.time() // period))
        guard = self._guard()
        if self.redis.get(guard) in (bucket, bucket.encode()):
            return False
        unreachable = self.probe()
        metrics.connection(target.CLUSTER, unreachable is None)
        try:
            current = self.kcp.get(self.path)
            status = current.get("status") or {}
            beats = status.get("heartbeat") or {}
            moment = now()
            conditions = status.get("conditions") or []
            syncer_message = (
                "the syncer reaches the physical cluster"
                if unreachable is None
                else f"the physical cluster does not answer: {unreachable}"
            )
            syncer_reason = "SyncerConnected" if unreachable is None else "ClusterUnreachable"
            conditions = set_condition(
                conditions, "SyncerReady", unreachable is None, syncer_reason, syncer_message
            )
            conditions = set_condition(
                conditions, "HeartbeatReady", True, "HeartbeatSent", f"heartbeat at {moment}"
            )
            # Ready is kcp's summary of the other conditions (the first False wins), written the same way so
            # kcp's heartbeat controller never rewrites it
            conditions = set_condition(
                conditions,
                "Ready",
                unreachable is None,
                "SyncTargetReady" if unreachable is None else syncer_reason,
                "" if unreachable is None else syncer_message,
            )
            conditions = trouble.conditions(conditions, self.troubles())
            self._patch(
                current,
                {
                    "syncerIdentifier": target.syncer_id(self.workspace.sync_target, self.workspace.uid),
                    "lastHeartbeatTime": moment,
                    "lastSyncerHeartbeatTime": moment,
                    "heartbeat": {
                        "count": int(beats.get("count") or 0) + 1,
                        "lastHeartbeat": moment,
                        "errors": int(beats.get("errors") or 0) + (0 if unreachable is None else 1),
                    },
                    "conditions": conditions,
                },
            )
        except (ApiException, OSError) as exc:
            metrics.heartbeat("failed")
            self._retry_later(period, exc)
        metrics.heartbeat("ok" if unreachable is None else "unreachable")
        self.redis.set(guard, bucket, ex=max(1, int(period * 3)))
        self.redis.delete(guard + ":failures")
        log_event(
            logger,
            "workload.heartbeat",
            synctarget=self.workspace.sync_target,
            cluster="unreachable" if unreachable else "reachable",
        )
        return True

    def _retry_later(self, period: float, exc: Exception) -> None:
        """Raise ``RequeueAfter`` a jittered, doubling delay (capped at half a period)."""
        failures = int(self.redis.incr(self._guard() + ":failures"))
        self.redis.expire(self._guard() + ":failures", max(1, int(period * 3)))
        delay = min(period / 2, 0.5 * 2 ** min(failures, 16)) * random.uniform(0.5, 1.0)
        log_event(
            logger,
            "workload.heartbeat_failed",
            level=logging.WARNING,
            synctarget=self.workspace.sync_target,
            error=f"{type(exc).__name__}: {describe(exc)}",
            retry_in=round(delay, 2),
        )
        raise RequeueAfter(delay) from exc
