"""The splitter's arithmetic and status aggregation, and clusters mode's names."""

from __future__ import annotations

from typing import Any

from syncflow.modes.clusters.identity import SyncedType, finalizer, shard_name
from syncflow.modes.clusters.splitter import aggregate, divide
from syncflow.names import dns1123_subdomain, qualified_name


def test_replicas_are_divided_evenly_with_the_remainder_to_the_first_in_name_order() -> None:
    assert divide(5, ["west", "east"]) == {"east": 3, "west": 2}
    assert divide(5, ["north", "west", "east"]) == {"east": 2, "north": 2, "west": 1}
    assert divide(1, ["b", "a", "c"]) == {"a": 1, "b": 0, "c": 0}
    assert divide(0, ["a"]) == {"a": 0}
    assert divide(4, []) == {}


def shard(cluster: str, ready: int, available: str = "True") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"workloads.kcp.dev/cluster": cluster}},
        "status": {
            "replicas": ready,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "conditions": [{"type": "Available", "status": available, "reason": "R", "message": "m"}],
        },
    }


def test_the_roots_status_sums_the_shards_and_a_condition_holds_only_in_all() -> None:
    root = {"metadata": {"generation": 4}}
    status = aggregate([shard("east", 3), shard("west", 2)], root)
    assert (status["replicas"], status["readyReplicas"], status["observedGeneration"]) == (5, 5, 4)
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [("Available", "True")]
    status = aggregate([shard("east", 3), shard("west", 0, available="False")], root)
    (condition,) = status["conditions"]
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "R", "west: m")


def test_names_stay_valid_for_long_cluster_names() -> None:
    long = "c" * 200
    assert finalizer("east") == "workload.kcp.dev/syncer-east"
    assert not qualified_name(finalizer(long))
    assert shard_name("web", "east") == "web--east"
    assert not dns1123_subdomain(shard_name("w" * 200, long))
    assert SyncedType.parse("deployments.apps").rule_name("east") == "east~deployments.apps"
    assert SyncedType.parse("configmaps") == SyncedType("configmaps", "")
