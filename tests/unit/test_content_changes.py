"""Which events of a copy's watch changed what a sync writes (and so may be drift to revert), not
only its status or server-kept metadata."""

from __future__ import annotations

from typing import Any

from syncflow.kube.refs import ObjectRef
from syncflow.sync.watches import ContentChanges

REF = ObjectRef("", "kcp-abc", "web")


def deployment(replicas: int, rv: str, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "kcp-abc", "resourceVersion": rv, "labels": {"a": "b"}},
        "spec": {"replicas": replicas},
        "status": status,
    }


def test_a_status_update_is_no_change_and_a_spec_edit_is() -> None:
    changes = ContentChanges()
    assert changes.changed(deployment(2, "1"), REF), "an object not seen before counts as changed"
    assert not changes.changed(deployment(2, "2", readyReplicas=2), REF)
    assert changes.changed(deployment(5, "3", readyReplicas=2), REF)
    assert not changes.changed(deployment(5, "4", readyReplicas=5), REF)


def test_a_label_edit_is_a_change() -> None:
    changes = ContentChanges()
    changes.changed(deployment(2, "1"), REF)
    relabelled = deployment(2, "2")
    relabelled["metadata"]["labels"]["a"] = "c"
    assert changes.changed(relabelled, REF)


def test_a_deleted_object_is_forgotten() -> None:
    changes = ContentChanges()
    changes.changed(deployment(2, "1"), REF)
    changes.forget(REF)
    assert changes.changed(deployment(2, "2"), REF)
