"""devcluster --kcp's SyncTarget heartbeat rules and condition summary (kcp v0.11's controller)."""

from __future__ import annotations

import asyncio
import datetime as dt

from syncflow.devcluster.crud import Target
from syncflow.devcluster.kcp import conditions
from syncflow.devcluster.kcp.heartbeat import (
    HEARTBEAT_READY,
    SUMMARISED,
    HeartbeatMonitor,
    heartbeat_condition,
    last_heartbeat,
)
from syncflow.devcluster.kcp.server import KcpDevCluster

NOW = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


def _condition(kind: str, status: str, reason: str = "R", message: str = "") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message}


def test_last_heartbeat_is_the_later_of_both_fields_and_ignores_garbage() -> None:
    status = {"lastHeartbeatTime": "2026-01-01T11:59:00Z", "lastSyncerHeartbeatTime": "2026-01-01T11:59:30Z"}
    assert last_heartbeat(status) == dt.datetime(2026, 1, 1, 11, 59, 30, tzinfo=dt.UTC)
    assert last_heartbeat({"lastHeartbeatTime": "yesterday"}) is None
    assert last_heartbeat({}) is None


def test_heartbeat_condition_never_fresh_and_stale() -> None:
    never = heartbeat_condition(None, NOW, 60)
    assert (never["status"], never["reason"], never["message"]) == (
        "False",
        "ErrorHeartbeat",
        "No heartbeat yet seen",
    )
    assert heartbeat_condition(NOW - dt.timedelta(seconds=60), NOW, 60)["status"] == "True"
    stale = heartbeat_condition(NOW - dt.timedelta(seconds=61), NOW, 60)
    assert stale["status"] == "False" and stale["reason"] == "ErrorHeartbeat"
    assert stale["message"] == "No heartbeat since 2026-01-01T11:58:59Z, more than 60s ago"


def test_summary_false_wins_then_true_then_unknown_in_kcps_order() -> None:
    syncer_down = _condition("SyncerReady", "False", "ClusterUnreachable", "no route")
    stale = _condition(HEARTBEAT_READY, "False", "ErrorHeartbeat", "old")
    ready = conditions.summary([stale, syncer_down], SUMMARISED, "SyncTargetReady")
    assert ready == _condition("Ready", "False", "ClusterUnreachable", "no route")
    both_fine = [_condition("SyncerReady", "True"), _condition(HEARTBEAT_READY, "Unknown")]
    assert conditions.summary(both_fine, SUMMARISED, "SyncTargetReady") == _condition(
        "Ready", "True", "SyncTargetReady"
    )
    assert conditions.summary([_condition("Other", "False")], SUMMARISED, "SyncTargetReady") is None


def test_upsert_leaves_a_true_condition_as_its_writer_set_it() -> None:
    mine = _condition(HEARTBEAT_READY, "True", "SyncerSaysSo", "fine")
    assert conditions.upsert([mine], _condition(HEARTBEAT_READY, "True", "HeartbeatReceived")) == [mine]
    failed = _condition(HEARTBEAT_READY, "False", "ErrorHeartbeat")
    assert conditions.upsert([mine], failed) == [failed]
    assert conditions.upsert([], failed) == [failed]


def test_transition_time_kept_while_status_holds() -> None:
    old = [{**_condition("Ready", "False", "A"), "lastTransitionTime": "t0"}]
    same_status = [{**_condition("Ready", "False", "B"), "lastTransitionTime": "t1"}]
    assert conditions.keep_transition_times(old, same_status)[0]["lastTransitionTime"] == "t0"
    flipped = [{**_condition("Ready", "True"), "lastTransitionTime": "t1"}]
    assert conditions.keep_transition_times(old, flipped)[0]["lastTransitionTime"] == "t1"


def _create_sync_target(server: KcpDevCluster, name: str) -> Target:
    rtype = server.registry.by_group_resource("root", "workload.kcp.io", "synctargets")
    assert rtype is not None
    t = Target("root", rtype, "v1alpha1")
    server.objects.create(t, "", {"metadata": {"name": name}})
    return t


def test_monitor_waits_only_for_fresh_heartbeats_and_flips_at_expiry() -> None:
    async def scenario() -> tuple[int, int, str, str]:
        server = KcpDevCluster(heartbeat_threshold=0.3)
        monitor: HeartbeatMonitor = server.heartbeats
        idle = monitor.scheduled
        t = _create_sync_target(server, "east")
        beat = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        current = server.objects.store.get("root", "workload.kcp.io", "synctargets", "", "east")
        assert current is not None
        server.objects.replace(t, current, {**current, "status": {"lastHeartbeatTime": beat}}, "status")
        waiting = monitor.scheduled
        fresh = _state(server)
        deadline = asyncio.get_running_loop().time() + 5
        while _state(server) == "True" and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        return idle, waiting, fresh, _state(server)

    idle, waiting, fresh, expired = asyncio.run(scenario())
    assert (idle, waiting) == (0, 1)
    assert (fresh, expired) == ("True", "False")


def _state(server: KcpDevCluster) -> str:
    obj = server.objects.store.get("root", "workload.kcp.io", "synctargets", "", "east")
    assert obj is not None
    found = {c["type"]: c["status"] for c in obj["status"]["conditions"]}
    assert found["Ready"] == found[HEARTBEAT_READY]
    return str(found[HEARTBEAT_READY])
