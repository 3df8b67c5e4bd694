"""Merging EdgeSyncConfigs: an object follows only the configs that select it (``propagateDeletion``:
keep wins; ``returnReportedState``: returning wins), a CRD upsync selector is refused, and of two
conflicting conversions the first config's wins."""

from __future__ import annotations

from typing import Any

from syncflow.api.edgesyncconfig import EdgeSyncConfig
from syncflow.modes.edge.merge import merge
from syncflow.modes.edge.rules import switches
from syncflow.sync import filters, transforms
from syncflow.sync.metadata import KEEP_ANNOTATION
from syncflow.sync.rule import Resource, Side, SyncRule

CONFIGMAPS = Resource(group="", version="v1", plural="configmaps", kind="ConfigMap", namespaced=True)


def config(name: str, *names: str, **flags: bool) -> EdgeSyncConfig:
    spec: dict[str, Any] = {
        "downSyncedResources": [{"version": "v1", "kind": "ConfigMap", "name": n} for n in names],
        **flags,
    }
    return EdgeSyncConfig.parse({"metadata": {"name": name}, "spec": spec})


def rule(*configs: EdgeSyncConfig) -> SyncRule:
    """The downsync rule of ConfigMaps with the switches of ``configs``."""
    per_object = switches(merge(list(configs)).down[("", "v1", "ConfigMap")])
    return SyncRule(
        name="down:configmaps",
        agent="pc1",
        source=Side(endpoint="kcp", resource=CONFIGMAPS),
        target=Side(endpoint="pcluster", resource=CONFIGMAPS),
        status=per_object.status,
        status_for=per_object.status_for,
        keep=per_object.keep,
    )


def cm(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "app", "annotations": annotations or {}}}


def test_deletion_follows_only_the_configs_that_select_the_object() -> None:
    edge = rule(config("keeper", "a", propagateDeletion=False), config("pc1", "b"))
    assert filters.keeps(edge, cm("a"))
    assert not filters.keeps(edge, cm("b"))


def test_an_object_two_configs_select_is_kept_if_either_keeps_it() -> None:
    edge = rule(config("keeper", "shared", propagateDeletion=False), config("pc1", "shared", "b"))
    assert filters.keeps(edge, cm("shared"))
    assert not filters.keeps(edge, cm("b"))


def test_nothing_is_kept_when_every_config_propagates_deletion() -> None:
    assert rule(config("pc1", "a"), config("other", "b")).keep is None


def test_reported_state_follows_only_the_configs_that_select_the_object() -> None:
    edge = rule(config("quiet", "a", returnReportedState=False), config("pc1", "b"))
    assert edge.status == "return"
    assert not filters.returns_status(edge, cm("a"))
    assert filters.returns_status(edge, cm("b"))


def test_an_object_two_configs_select_returns_state_if_either_asks() -> None:
    edge = rule(config("quiet", "shared", returnReportedState=False), config("pc1", "shared"))
    assert filters.returns_status(edge, cm("shared"))


def test_an_empty_default_config_does_not_switch_reported_state_back_on() -> None:
    edge = rule(config("quiet", "a", returnReportedState=False), config("pc1"))
    assert edge.status == "none"
    assert not filters.returns_status(edge, cm("a"))


def test_a_kept_objects_copy_is_marked_and_the_mark_follows_the_rule() -> None:
    edge = rule(config("keeper", "a", propagateDeletion=False), config("pc1", "b"))
    marked = transforms.of_rule(edge, cm("a"))
    assert marked["metadata"]["annotations"] == {KEEP_ANNOTATION: "true"}
    unmarked = transforms.of_rule(edge, cm("b", {KEEP_ANNOTATION: "true", "team": "x"}))
    assert unmarked["metadata"]["annotations"] == {"team": "x"}


def test_a_crd_upsync_selector_is_refused_and_the_rest_applies() -> None:
    crd = {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"}
    report = {"group": "wgpolicyk8s.io", "version": "v1alpha2", "kind": "PolicyReport"}
    merged = merge(
        [EdgeSyncConfig.parse({"metadata": {"name": "up"}, "spec": {"upSyncedResources": [crd, report]}})]
    )
    assert list(merged.up) == [("wgpolicyk8s.io", "v1alpha2", "PolicyReport")]
    assert merged.refused == {"up": ["upSyncedResources[0]: CustomResourceDefinitions are never upsynced"]}


def test_of_two_conversions_of_one_object_the_first_configs_wins() -> None:
    def converting(name: str, downstream: str) -> EdgeSyncConfig:
        up = {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"}
        conversion = {"upstream": {**up, "name": "a.denatured"}, "downstream": {**up, "name": downstream}}
        return EdgeSyncConfig.parse({"metadata": {"name": name}, "spec": {"conversions": [conversion]}})

    merged = merge([converting("second", "c.io"), converting("first", "b.io")])
    assert [c.downstream.name for c in merged.conversions] == ["b.io"]
    assert merged.conflicts == {
        "second": ["conversion of CustomResourceDefinition a.denatured: the one in first wins"]
    }
