"""The three-way merge: kcp changes win, local edits and other controllers' fields survive (or, for a
rule that reverts drift, local edits of kcp's fields are undone)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from syncflow.devcluster.patch import merge_patch
from syncflow.sync import metadata as md
from syncflow.sync.merge import carries, three_way_patch

SYNC = {md.REMOTE_CLUSTER_LABEL: "c1", md.AGENT_LABEL: "agent"}
SYNC_ANN = {md.REMOTE_NAME_ANNOTATION: "thing"}


def obj(spec: dict[str, Any], labels: dict[str, str] | None = None, **top: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "local", "namespace": "ns", "uid": "u1", "resourceVersion": "5"}
    meta["labels"] = {**SYNC, **(labels or {})}
    meta["annotations"] = dict(SYNC_ANN)
    return {"apiVersion": "example.corp/v1", "kind": "Thing", "metadata": meta, "spec": spec, **top}


def last(spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A last-applied state in api-syncagent's form: kcp GVK and name, no sync metadata."""
    meta: dict[str, Any] = {"name": "remote", "namespace": "team"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "remote.corp/v1alpha1", "kind": "RemoteThing", "metadata": meta, "spec": spec}


def apply(live: dict[str, Any], patch: dict[str, Any] | None) -> dict[str, Any]:
    result: dict[str, Any] = merge_patch(live, patch or {})
    return result


def test_no_change_returns_none() -> None:
    live = obj({"a": 1, "local": True}, status={"phase": "x"})
    assert three_way_patch(last({"a": 1}), obj({"a": 1}), live) is None


def test_kcp_change_is_set() -> None:
    assert three_way_patch(last({"a": 1, "b": 1}), obj({"a": 2, "b": 1}), obj({"a": 1, "b": 1})) == {
        "spec": {"a": 2}
    }


def test_local_edit_survives_kcp_edit_of_another_field_then_kcp_wins() -> None:
    live = obj({"replicas": 5, "image": "v1"})  # replicas edited locally (kcp said 1)
    patch = three_way_patch(last({"replicas": 1, "image": "v1"}), obj({"replicas": 1, "image": "v2"}), live)
    assert patch == {"spec": {"image": "v2"}}
    live = apply(live, patch)
    assert live["spec"] == {"replicas": 5, "image": "v2"}
    patch = three_way_patch(last({"replicas": 1, "image": "v2"}), obj({"replicas": 3, "image": "v2"}), live)
    assert apply(live, patch)["spec"] == {"replicas": 3, "image": "v2"}


def test_field_removed_in_kcp_is_removed_locally() -> None:
    patch = three_way_patch(last({"a": 1, "gone": {"x": 1}}), obj({"a": 1}), obj({"a": 1, "gone": {"x": 1}}))
    assert patch == {"spec": {"gone": None}}


def test_field_removed_in_kcp_and_already_gone_locally_is_no_op() -> None:
    assert three_way_patch(last({"a": 1, "gone": 1}), obj({"a": 1}), obj({"a": 1})) is None


def test_fields_of_local_controllers_survive_nested_and_top_level() -> None:
    live = obj({"a": 1, "nested": {"k": 1, "defaulted": "yes"}, "ctrl": "set"}, extra={"x": 1})
    patch = three_way_patch(last({"a": 1, "nested": {"k": 1}}), obj({"a": 1, "nested": {"k": 2}}), live)
    assert patch == {"spec": {"nested": {"k": 2}}}
    result = apply(live, patch)
    assert result["spec"]["ctrl"] == "set"
    assert result["spec"]["nested"]["defaulted"] == "yes"
    assert result["extra"] == {"x": 1}


def test_lists_are_replaced_whole() -> None:
    live = obj({"ports": [1, 2, 9]})
    patch = three_way_patch(last({"ports": [1, 2]}), obj({"ports": [1, 3]}), live)
    assert patch == {"spec": {"ports": [1, 3]}}


def test_status_and_identity_are_never_touched() -> None:
    desired = obj({"a": 1}, status={"phase": "kcp"})
    desired["metadata"]["name"] = "other"
    live = obj({"a": 1}, status={"phase": "local"})
    assert three_way_patch(last({"a": 1}), desired, live) is None
    assert three_way_patch(None, desired, live) is None


def test_missing_sync_metadata_is_added_again() -> None:
    live = obj({"a": 1})
    del live["metadata"]["labels"][md.REMOTE_CLUSTER_LABEL]
    live["metadata"]["annotations"] = {}
    patch = three_way_patch(last({"a": 1}), obj({"a": 1}), live)
    assert patch == {"metadata": {"labels": {md.REMOTE_CLUSTER_LABEL: "c1"}, "annotations": SYNC_ANN}}


def test_user_labels_follow_kcp_and_local_labels_survive() -> None:
    live = obj({"a": 1}, labels={"team": "a", "old": "x", "local": "y"})
    patch = three_way_patch(
        last({"a": 1}, labels={"team": "a", "old": "x"}), obj({"a": 1}, labels={"team": "b"}), live
    )
    assert patch == {"metadata": {"labels": {"team": "b", "old": None}}}
    assert apply(live, patch)["metadata"]["labels"] == {**SYNC, "team": "b", "local": "y"}


def test_without_state_top_level_fields_are_replaced_and_labels_merged() -> None:
    live = obj({"a": 1, "local": True}, labels={"local": "y"}, extra="kept")
    live["metadata"]["labels"].pop(md.AGENT_LABEL)
    desired = obj({"a": 2}, labels={"team": "b"}, data={"k": "v"})
    patch = three_way_patch(None, desired, live)
    assert patch == {
        "spec": {"a": 2, "local": None},
        "data": {"k": "v"},
        "metadata": {"labels": {md.AGENT_LABEL: "agent", "team": "b"}},
    }
    result = apply(live, patch)
    assert result["spec"] == {"a": 2}
    assert result["extra"] == "kept"
    assert result["metadata"]["labels"]["local"] == "y"
    assert three_way_patch(None, desired, result) is None


DEFAULTED = [{"name": "web", "image": "nginx", "imagePullPolicy": "IfNotPresent"}]


def test_revert_undoes_a_local_edit_of_a_field_kcp_sets_and_keeps_fields_only_set_locally() -> None:
    live = obj({"replicas": 5, "containers": DEFAULTED, "ctrl": "set"}, labels={"team": "x", "local": "y"})
    kcp = {"replicas": 1, "containers": [{"name": "web", "image": "nginx"}]}
    state, desired = last(kcp, labels={"team": "a"}), obj(kcp, labels={"team": "a"})
    assert three_way_patch(state, desired, live) is None, "without revert a local edit survives"
    patch = three_way_patch(state, desired, live, revert=True)
    assert patch == {"spec": {"replicas": 1}, "metadata": {"labels": {"team": "a"}}}
    reverted = apply(live, patch)
    assert reverted["spec"]["containers"] == DEFAULTED and reverted["spec"]["ctrl"] == "set"
    assert reverted["metadata"]["labels"]["local"] == "y"
    assert three_way_patch(state, desired, reverted, revert=True) is None
    assert not carries(live, state) and carries(reverted, state)


def test_revert_replaces_a_list_whose_item_was_edited_locally() -> None:
    live = obj({"containers": [{**DEFAULTED[0], "image": "evil"}]})
    kcp = {"containers": [{"name": "web", "image": "nginx"}]}
    patch = three_way_patch(last(kcp), obj(kcp), live, revert=True)
    assert patch == {"spec": {"containers": kcp["containers"]}}


def test_revert_sets_a_field_kcp_sets_that_was_removed_locally() -> None:
    patch = three_way_patch(last({"a": 1, "b": {"c": 2}}), obj({"a": 1, "b": {"c": 2}}), obj({}), revert=True)
    assert patch == {"spec": {"a": 1, "b": {"c": 2}}}


# --- properties -------------------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c", "d"])
SCALARS = st.one_of(st.integers(-3, 3), st.booleans(), st.sampled_from(["x", "y"]))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
SPECS = st.dictionaries(KEYS, VALUES, max_size=4)


def covers(want: Any, got: Any) -> bool:
    """Every field of ``want`` is in ``got`` with the same value (maps may have extra keys)."""
    if isinstance(want, Mapping):
        return isinstance(got, Mapping) and all(k in got and covers(v, got[k]) for k, v in want.items())
    return bool(want == got)


def kcp_changes_applied(old: Any, want: Mapping[str, Any], got: Mapping[str, Any]) -> bool:
    old = old if isinstance(old, Mapping) else {}
    for key, value in want.items():
        if old.get(key, ...) == value:
            continue
        if (
            isinstance(value, Mapping)
            and isinstance(old.get(key), Mapping)
            and isinstance(got.get(key), Mapping)
        ):
            if not kcp_changes_applied(old[key], value, got[key]):
                return False
        elif not covers(value, got.get(key)):
            return False
    return all(key in want or key not in got for key in old)


def local_fields_kept(old: Mapping[str, Any], want: Mapping[str, Any], before: Any, after: Any) -> bool:
    for key, value in before.items():
        if key not in old and key not in want:
            if after.get(key, ...) != value:
                return False
        elif key in want and isinstance(want[key], Mapping) and isinstance(value, Mapping):
            nested_old = old.get(key)
            if not isinstance(nested_old, Mapping):
                nested_old = {}
            if not local_fields_kept(nested_old, want[key], value, after.get(key)):
                return False
    return True


@settings(max_examples=400, deadline=None)
@given(old=SPECS, want=SPECS, live=SPECS)
def test_property_three_way(old: dict[str, Any], want: dict[str, Any], live: dict[str, Any]) -> None:
    before = obj(copy.deepcopy(live), status={"s": 1})
    patch = three_way_patch(last(old), obj(want), before)
    assert patch is None or (patch and "status" not in patch)
    after = apply(before, patch)
    assert after["status"] == {"s": 1}
    assert kcp_changes_applied(old, want, after["spec"])
    assert local_fields_kept(old, want, live, after["spec"])
    for key, value in want.items():  # fields kcp did not change keep the local value
        if key in old and old[key] == value:
            assert after["spec"].get(key, ...) == live.get(key, ...)
    assert three_way_patch(last(old), obj(want), after) is None


@settings(max_examples=300, deadline=None)
@given(want=SPECS, live=SPECS, local_labels=st.dictionaries(st.sampled_from(["l1", "l2"]), st.just("v")))
def test_property_without_state(
    want: dict[str, Any], live: dict[str, Any], local_labels: dict[str, str]
) -> None:
    before = obj(live, labels=local_labels)
    after = apply(before, three_way_patch(None, obj(want, data=want), before))
    assert after["spec"] == want
    assert after["data"] == want
    assert after["metadata"]["labels"] == {**SYNC, **local_labels}
    assert three_way_patch(None, obj(want, data=want), after) is None


def carried(want: Any, got: Any) -> bool:
    """``got`` holds every value of ``want``: maps may have extra keys, lists as many items, each
    holding its counterpart."""
    if isinstance(want, Mapping):
        return isinstance(got, Mapping) and all(k in got and carried(v, got[k]) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(carried, want, got))
    return bool(want == got)


@settings(max_examples=400, deadline=None)
@given(old=SPECS, want=SPECS, live=SPECS)
def test_property_revert(old: dict[str, Any], want: dict[str, Any], live: dict[str, Any]) -> None:
    before = obj(copy.deepcopy(live), status={"s": 1})
    after = apply(before, three_way_patch(last(old), obj(want), before, revert=True))
    assert after["status"] == {"s": 1}
    assert carried(want, after["spec"]), "every field kcp sets holds kcp's value"
    assert kcp_changes_applied(old, want, after["spec"])
    assert local_fields_kept(old, want, live, after["spec"])
    assert three_way_patch(last(old), obj(want), after, revert=True) is None
    assert carries(after, last(want))
