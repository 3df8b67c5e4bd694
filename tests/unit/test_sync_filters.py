"""spec.filter: resource labels on the object, namespace labels on the kcp Namespace."""

from __future__ import annotations

from typing import Any

import pytest

from syncflow.sync.filters import matches_filter

FILTER = {
    "resource": {"matchLabels": {"include": "me"}},
    "namespace": {"matchExpressions": [{"key": "sync", "operator": "In", "values": ["true"]}]},
}


def thing(labels: dict[str, str], namespace: str = "team-a") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "x", "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


def ns(labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": labels}}


@pytest.mark.parametrize("spec_filter", [None, {}, {"resource": None, "namespace": {}}])
def test_no_filter_matches_everything(spec_filter: dict[str, Any] | None) -> None:
    assert matches_filter(spec_filter, thing({}), None)


def test_both_selectors_must_match() -> None:
    assert matches_filter(FILTER, thing({"include": "me"}), ns({"sync": "true"}))
    assert not matches_filter(FILTER, thing({"include": "you"}), ns({"sync": "true"}))
    assert not matches_filter(FILTER, thing({"include": "me"}), ns({"sync": "false"}))
    assert not matches_filter(FILTER, thing({}), ns({"sync": "true"}))


def test_namespace_filter_without_namespace_object_does_not_match() -> None:
    assert not matches_filter(FILTER, thing({"include": "me"}), None)


def test_namespace_filter_reads_the_namespace_labels_not_the_object_labels() -> None:
    assert not matches_filter(
        {"namespace": {"matchLabels": {"sync": "true"}}}, thing({"sync": "true"}), ns({})
    )


def test_cluster_scoped_objects_only_use_the_resource_selector() -> None:
    assert matches_filter(FILTER, thing({"include": "me"}, namespace=""), None)
    assert not matches_filter(FILTER, thing({}, namespace=""), None)


def test_objects_without_labels() -> None:
    assert not matches_filter({"resource": {"matchLabels": {"a": "b"}}}, {"metadata": {"name": "x"}}, None)
    assert matches_filter(
        {"resource": {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}}, {"metadata": {}}, None
    )
