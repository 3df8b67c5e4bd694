"""Rule selectors: publish mode's spec.filter (resource labels on the object, namespace labels on the
kcp Namespace) and the engine's other selector fields."""

from __future__ import annotations

from typing import Any

import pytest

from syncflow.api.publishedresource import Filter
from syncflow.modes.publish.rules import selector_of
from syncflow.sync.filters import concerns, matches, may_select
from syncflow.sync.rule import Resource, Selector, Side, SyncRule

FILTER = {
    "resource": {"matchLabels": {"include": "me"}},
    "namespace": {"matchExpressions": [{"key": "sync", "operator": "In", "values": ["true"]}]},
}


def matches_filter(
    spec_filter: dict[str, Any] | None, obj: dict[str, Any], namespace_obj: dict[str, Any] | None
) -> bool:
    return matches(
        selector_of(Filter.model_validate(spec_filter) if spec_filter else None), obj, namespace_obj
    )


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


def test_annotation_field_namespace_and_name_selectors() -> None:
    obj = {
        "metadata": {"name": "a", "namespace": "ns1", "annotations": {"team": "x"}},
        "type": "kubernetes.io/service-account-token",
    }
    assert matches(Selector(annotations="team=x", namespaces=("ns1",), names=("a",)), obj)
    assert not matches(Selector(annotations="team=y"), obj)
    assert not matches(Selector(namespaces=("ns2",)), obj)
    assert not matches(Selector(names=("b",)), obj)
    assert not matches(Selector(fields="type!=kubernetes.io/service-account-token"), obj)
    assert matches(Selector(fields="type!=Opaque"), obj)


def _rule(group: str, plural: str, kind: str) -> SyncRule:
    resource = Resource(group=group, version="v1", plural=plural, kind=kind, namespaced=True)
    return SyncRule(
        name=plural,
        agent="agent",
        source=Side(endpoint="kcp", resource=resource),
        target=Side(endpoint="cluster", resource=resource),
    )


def test_kube_root_ca_configmap_is_never_a_source_whatever_the_selector() -> None:
    """Every cluster and kcp workspace publishes its own in each namespace: syncing one would fight it."""
    configmaps = _rule("", "configmaps", "ConfigMap")
    root_ca = {"metadata": {"name": "kube-root-ca.crt", "namespace": "team-a"}, "data": {"ca.crt": "x"}}
    assert not may_select(configmaps, root_ca) and not concerns(configmaps, root_ca)
    assert may_select(configmaps, {"metadata": {"name": "app-config", "namespace": "team-a"}})
    assert may_select(_rule("example.com", "widgets", "Widget"), root_ca)  # only the ConfigMap is meant
