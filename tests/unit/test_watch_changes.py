"""Which watch events are work: a source change of status alone is no sync, a copy change that
leaves its status alone is no status run (``syncflow.sync.changes``)."""

from __future__ import annotations

from typing import Any

from syncflow.kube.refs import ObjectRef
from syncflow.sync.changes import (
    Fingerprints,
    filters_copy_changes,
    filters_source_changes,
    spec_view,
    status_view,
)
from syncflow.sync.rule import Annotate, Mutate, Resource, Side, SyncRule

REF = ObjectRef("root:org:ws", "default", "web")


def deployment(rv: str, replicas: int = 1, ready: int = 0, **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": rv, **meta},
        "spec": {"replicas": replicas},
        "status": {"readyReplicas": ready},
    }


def test_a_status_only_change_is_not_a_change_but_spec_and_metadata_are() -> None:
    changes = Fingerprints(spec_view)
    assert changes.changed(REF, deployment("1")), "an object never seen counts as changed"
    assert not changes.changed(REF, deployment("2", ready=1)), "status and resourceVersion only"
    assert not changes.changed(REF, deployment("3", ready=1, generation=2)), "generation is bookkeeping"
    assert changes.changed(REF, deployment("4", replicas=3, ready=1))
    assert changes.changed(REF, deployment("5", replicas=3, ready=1, finalizers=["a"]))
    assert changes.changed(REF, deployment("6", replicas=3, ready=1, finalizers=["a"], labels={"x": "y"}))


def test_a_deleted_or_forgotten_object_counts_as_changed_again() -> None:
    changes = Fingerprints(spec_view, limit=2)
    changes.changed(REF, deployment("1"))
    changes.forget(REF)
    assert changes.changed(REF, deployment("2"))
    for name in ("a", "b"):  # two others push the oldest out of a table of two
        changes.changed(ObjectRef("root:org:ws", "default", name), deployment("1"))
    assert changes.changed(REF, deployment("3")), "forgotten: treated as new, never skipped"


def rule(**fields: Any) -> SyncRule:
    side = Side(
        endpoint="kcp",
        resource=Resource(
            group="apps", version="v1", kind="Deployment", plural="deployments", namespaced=True
        ),
    )
    return SyncRule(
        name="deployments.apps",
        agent="a",
        source=side,
        target=side.model_copy(update={"endpoint": "local"}),
        **fields,
    )


def test_only_rules_whose_sync_cannot_read_the_status_skip_status_changes() -> None:
    assert filters_source_changes(rule())
    assert filters_source_changes(rule(transforms=(Annotate(annotations={"a": "b"}),)))
    assert not filters_source_changes(rule(status="carry")), "upsync copies the source's status"
    mutate = Mutate.model_validate({"spec": [{"delete": {"path": "spec.replicas"}}]})
    assert not filters_source_changes(rule(transforms=(mutate,))), "a spec mutation may read the status"


def test_a_copy_change_counts_only_when_its_status_changed() -> None:
    changes = Fingerprints(status_view)
    assert changes.changed(REF, deployment("1"))
    assert not changes.changed(REF, deployment("2", labels={"x": "y"})), "metadata only"
    assert not changes.changed(REF, deployment("3", replicas=5)), "spec only: our own write, say"
    assert changes.changed(REF, deployment("4", replicas=5, ready=1))


def test_only_rules_without_status_mutations_skip_copy_changes() -> None:
    assert filters_copy_changes(rule())
    mutate = Mutate.model_validate({"status": [{"delete": {"path": "status.conditions"}}]})
    assert not filters_copy_changes(rule(transforms=(mutate,))), "a status mutation reads the whole copy"
