"""Workload mode's sync-target key is kcp's, so kcp and its tools find syncflow's finalizer; objects that
hold the key of earlier syncflow versions get kcp's on their next sync."""

from __future__ import annotations

from syncflow.modes.workload import target
from syncflow.modes.workload.rules import Workspace
from syncflow.sync.resync import keys_needing_work
from syncflow.sync.rule import Resource, Side, SyncRule
from tests.support.copies import copy_of
from tests.unit.test_resync_keys import Lists, names, source


def test_the_sync_target_key_is_kcps() -> None:
    """kcp v0.11's syncer tests: SyncTarget us-west1 of logical cluster root:org:ws."""
    assert target.sync_target_key("root:org:ws", "us-west1") == "6ohB8yeXhwqTQVuBzJRgqcRJTpRjX7yTZu5g5g"
    assert (
        target.finalizer("root:org:ws", "us-west1")
        == "workload.kcp.io/syncer-6ohB8yeXhwqTQVuBzJRgqcRJTpRjX7yTZu5g5g"
    )


def test_the_path_key_of_earlier_versions_is_replaced() -> None:
    workspace = Workspace(cluster="2abc", path="root:org:ws", sync_target="east", uid="u")
    old = target.finalizer("root:org:ws", "east")
    assert workspace.previous_finalizers() == (old,)
    assert Workspace("root", "root", "east", "u").previous_finalizers() == ()  # the same key: nothing to do
    widgets = Resource(group="example.com", version="v1", plural="widgets", kind="Widget", namespaced=True)
    rule = SyncRule(
        name="widgets",
        agent="agent",
        source=Side(endpoint="kcp", resource=widgets),
        target=Side(endpoint="service", resource=widgets),
        finalizer=target.finalizer("2abc", "east"),
        previous_finalizers=workspace.previous_finalizers(),
    )
    lists = Lists(
        [source("migrated", finalizers=[rule.finalizer]), source("old", finalizers=[old])],
        [copy_of("migrated"), copy_of("old")],
    )
    assert names(keys_needing_work(rule, lists)) == {"old"}  # synced in sync: only the old key's object
    assert rule.holds({"metadata": {"finalizers": [old]}})
