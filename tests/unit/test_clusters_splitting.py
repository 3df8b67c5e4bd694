"""The splitter's arithmetic and status aggregation, and clusters mode's names."""

from __future__ import annotations

from typing import Any

from syncflow.modes.clusters.identity import SyncedType, finalizer, shard_name
from syncflow.modes.clusters.splitter import COUNTS, aggregate, divide
from syncflow.util.names import dns1123_subdomain, qualified_name


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


def conditions(status: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in status["conditions"]}


def test_the_roots_status_sums_the_shards_and_a_condition_holds_only_in_all() -> None:
    root = {"metadata": {"generation": 4}}
    both = {"east", "west"}
    status = aggregate([shard("east", 3), shard("west", 2)], root, both)
    assert (status["replicas"], status["readyReplicas"], status["observedGeneration"]) == (5, 5, 4)
    assert conditions(status) == {
        "Available": ("True", "AllShards", "true in all 2 shards"),
        "ShardsUnknown": ("False", "AllShardsKnown", "every shard is on a Ready cluster"),
    }
    status = aggregate([shard("east", 3), shard("west", 0, available="False")], root, both)
    assert conditions(status)["Available"] == ("False", "R", "west: m")


def test_a_shard_on_a_cluster_that_is_not_ready_is_not_counted_and_the_root_says_so() -> None:
    root = {"metadata": {"generation": 2}, "spec": {"replicas": 5}}
    shards = [shard("east", 5), shard("west", 2), shard("north", 1, available="False")]  # west, north: stale
    status = aggregate(shards, root, {"east"})
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (5, 5, 5)
    assert conditions(status) == {
        "Available": ("True", "AllShards", "true in all 1 shards whose status is known"),
        "ShardsUnknown": (
            "True",
            "ShardStatusUnknown",
            "the status of the shards on 2 cluster(s) that are not Ready is unknown and not counted: "
            "north, west",
        ),
    }


def test_with_no_cluster_ready_nothing_is_counted_and_no_condition_is_claimed() -> None:
    root = {
        "metadata": {"generation": 2},
        "status": {"conditions": [{"type": "Available", "status": "True"}]},
    }
    status = aggregate([shard("east", 3), shard("west", 2)], root, set())
    assert all(status[count] == 0 for count in COUNTS)
    assert conditions(status)["Available"] == (
        "Unknown",
        "ShardStatusUnknown",
        "no shard whose status is known reports it",
    )
    assert conditions(status)["ShardsUnknown"][:2] == ("True", "ShardStatusUnknown")


def test_names_stay_valid_for_long_cluster_names() -> None:
    long = "c" * 200
    assert finalizer("east") == "workload.kcp.dev/syncer-east"
    assert not qualified_name(finalizer(long))
    assert shard_name("web", "east") == "web--east"
    assert not dns1123_subdomain(shard_name("w" * 200, long))
    assert SyncedType.parse("deployments.apps").rule_name("east") == "east~deployments.apps"
    assert SyncedType.parse("configmaps") == SyncedType("configmaps", "")
