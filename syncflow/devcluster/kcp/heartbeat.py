"""kcp v0.11's SyncTarget heartbeat controller (``pkg/reconciler/workload/heartbeat``).

On every write of a SyncTarget, and again when its last heartbeat becomes older than the threshold
(``--sync-target-heartbeat-threshold``, kcp's default one minute), the controller sets
``HeartbeatReady``: ``False`` with reason ``ErrorHeartbeat`` when no heartbeat was seen yet or the
last one (``status.lastHeartbeatTime`` or kcp's ``status.lastSyncerHeartbeatTime``, the later of the
two) is older than the threshold, ``True`` otherwise; then ``Ready`` as the summary of
``SyncerReady``, ``APIImporterReady`` and ``HeartbeatReady``. kcp names the heartbeat condition
``HeartbeatHealthy``; syncflow's SyncTarget uses ``HeartbeatReady``.

Like kcp's controller, which re-queues a SyncTarget for the moment its heartbeat expires, one timer
per SyncTarget with a fresh heartbeat fires at that moment; without SyncTargets nothing runs.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging

from syncflow.api import synctarget
from syncflow.devcluster import errors
from syncflow.devcluster.crud import Objects, Target, now_rfc3339
from syncflow.devcluster.kcp import conditions
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.devcluster")

DEFAULT_THRESHOLD = 60.0
HEARTBEAT_READY = "HeartbeatReady"
ERROR_HEARTBEAT = "ErrorHeartbeat"
SUMMARISED = ("SyncerReady", "APIImporterReady", HEARTBEAT_READY)
_HEARTBEAT_FIELDS = ("lastHeartbeatTime", "lastSyncerHeartbeatTime")
_PLURAL = "synctargets"
_AFTER_EXPIRY = 0.05  # seconds past the threshold at which the timer checks again


def _parse_time(value: object) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def last_heartbeat(status: Obj) -> dt.datetime | None:
    """The latest heartbeat time the SyncTarget's status records, if any."""
    times = [t for t in (_parse_time(status.get(f)) for f in _HEARTBEAT_FIELDS) if t is not None]
    return max(times, default=None)


def heartbeat_condition(last: dt.datetime | None, now: dt.datetime, threshold: float) -> Obj:
    """``HeartbeatReady`` for a last heartbeat at ``last`` (None: never) seen at ``now``."""
    if last is None:
        return {
            "type": HEARTBEAT_READY,
            "status": "False",
            "reason": ERROR_HEARTBEAT,
            "message": "No heartbeat yet seen",
        }
    if (now - last).total_seconds() > threshold:
        since = last.strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "type": HEARTBEAT_READY,
            "status": "False",
            "reason": ERROR_HEARTBEAT,
            "message": f"No heartbeat since {since}, more than {threshold:g}s ago",
        }
    return {"type": HEARTBEAT_READY, "status": "True", "reason": "HeartbeatReceived", "message": ""}


def _is_sync_target(t: Target) -> bool:
    return (t.rtype.group, t.rtype.plural) == (synctarget.GROUP, _PLURAL)


class HeartbeatMonitor:
    """Keeps ``HeartbeatReady`` and ``Ready`` of every SyncTarget in step with its heartbeats."""

    def __init__(self, objects: Objects, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.objects = objects
        self.threshold = threshold
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        objects.on_write.append(self._after_write)
        objects.on_remove.append(self._after_remove)

    @property
    def scheduled(self) -> int:
        """SyncTargets whose heartbeat expiry is waited for."""
        return len(self._timers)

    def _after_write(self, t: Target, new: Obj, old: Obj | None) -> None:
        if _is_sync_target(t):
            self.reconcile(t, new)

    def _after_remove(self, t: Target, obj: Obj) -> None:
        if _is_sync_target(t):
            timer = self._timers.pop((t.cluster, obj["metadata"]["name"]), None)
            if timer is not None:
                timer.cancel()

    def reconcile(self, t: Target, obj: Obj) -> None:
        """Set the conditions of one SyncTarget from its last heartbeat; wait for its expiry."""
        now = dt.datetime.now(dt.UTC)
        status = obj.get("status") or {}
        last = last_heartbeat(status)
        stamp = {"lastTransitionTime": now_rfc3339()}
        old_conditions = list(status.get("conditions") or [])
        heartbeat = {**heartbeat_condition(last, now, self.threshold), **stamp}
        wanted = conditions.upsert(old_conditions, heartbeat)
        ready = conditions.summary(wanted, SUMMARISED, true_reason="SyncTargetReady")
        if ready is not None:
            wanted = conditions.upsert(wanted, {**ready, **stamp})
        wanted = conditions.keep_transition_times(old_conditions, wanted)
        if wanted != old_conditions:
            updated = deep_copy(obj)
            updated["status"] = {**status, "conditions": wanted}
            self.objects.replace(t, obj, updated, "status")  # re-enters reconcile, which finds no change
        if last is not None and (now - last).total_seconds() <= self.threshold:
            expiry = (last - now).total_seconds() + self.threshold
            self._wake(t, obj["metadata"]["name"], expiry + _AFTER_EXPIRY)

    def _wake(self, t: Target, name: str, delay: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # not serving yet: the next write of the object reconciles it
        key = (t.cluster, name)
        previous = self._timers.pop(key, None)
        if previous is not None:
            previous.cancel()
        self._timers[key] = loop.call_later(delay, self._expired, t, name)

    def _expired(self, t: Target, name: str) -> None:
        self._timers.pop((t.cluster, name), None)
        current = self.objects.store.get(t.cluster, t.rtype.group, t.rtype.plural, "", name)
        if current is None:
            return
        try:
            self.reconcile(t, current)
        except errors.StatusError as exc:
            log_event(
                logger,
                "synctarget.heartbeat_check_failed",
                level=logging.WARNING,
                key=f"{t.cluster}/{name}",
                error=exc.message,
            )
