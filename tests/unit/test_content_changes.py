"""Which events of a copy's watch changed what a sync writes (and so may be drift to revert), not
only its status or server-kept metadata."""

from __future__ import annotations

from typing import Any

from syncflow.kube.refs import ObjectRef
from syncflow.sync.changes import Fingerprints
from syncflow.sync.merge import managed_view

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
    changes = Fingerprints(managed_view)
    assert changes.changed(REF, deployment(2, "1")), "an object not seen before counts as changed"
    assert not changes.changed(REF, deployment(2, "2", readyReplicas=2))
    assert changes.changed(REF, deployment(5, "3", readyReplicas=2))
    assert not changes.changed(REF, deployment(5, "4", readyReplicas=5))


def test_a_label_edit_is_a_change() -> None:
    changes = Fingerprints(managed_view)
    changes.changed(REF, deployment(2, "1"))
    relabelled = deployment(2, "2")
    relabelled["metadata"]["labels"]["a"] = "c"
    assert changes.changed(REF, relabelled)


def test_a_deleted_object_is_forgotten() -> None:
    changes = Fingerprints(managed_view)
    changes.changed(REF, deployment(2, "1"))
    changes.forget(REF)
    assert changes.changed(REF, deployment(2, "2"))
