"""Workload's bench: the baseline writes the bodies syncflow writes (bench/workload.py)."""

from __future__ import annotations

from typing import Any

from bench.workload import TARGET, WORKSPACE, copy_bodies, deployment
from syncflow.modes.workload import target
from syncflow.sync import metadata as md
from syncflow.sync import state
from syncflow.sync.desired import managed_content, remote_labels

CLUSTER = "1ly0k28vbizkcm75"


def kcp_deployment() -> dict[str, Any]:
    """A Deployment as kcp serves it after the finalizer patch and the status return."""
    obj = deployment("d-7", "sync")
    meta = obj["metadata"]
    meta.update(
        namespace="ns-3",
        uid="0b5a",
        resourceVersion="41",
        creationTimestamp="2026-11-30T04:24:35Z",
        finalizers=[target.finalizer(CLUSTER, TARGET)],
        annotations={md.KCP_CLUSTER_ANNOTATION: CLUSTER},
        managedFields=[{"manager": "Python", "operation": "Update"}],
    )
    obj["status"] = {"replicas": 1, "readyReplicas": 1}
    return obj


def test_the_baseline_copy_carries_syncflows_labels_and_annotations_and_no_server_fields() -> None:
    obj = kcp_deployment()
    copy, _ = copy_bodies(obj, CLUSTER, "base-ns-3", "agent")
    meta = copy["metadata"]

    assert meta["name"] == "d-7" and meta["namespace"] == "base-ns-3"
    assert meta["labels"] == {"bench-run": "sync", **remote_labels(CLUSTER, "ns-3", "d-7", "agent")}
    assert meta["annotations"][md.REMOTE_NAME_ANNOTATION] == "d-7"
    assert meta["annotations"][md.REMOTE_NAMESPACE_ANNOTATION] == "ns-3"
    assert meta["annotations"][target.SYNC_TARGET_ANNOTATION] == TARGET
    assert meta["annotations"][target.WORKSPACE_ANNOTATION] == WORKSPACE
    assert meta["annotations"][target.LAST_SYNC_ANNOTATION].endswith("Z")
    assert md.KCP_CLUSTER_ANNOTATION not in meta["annotations"]
    assert not {"uid", "resourceVersion", "managedFields", "finalizers", "creationTimestamp"} & set(meta)
    assert "status" not in copy
    assert copy["spec"] == obj["spec"]


def test_the_baseline_state_secret_is_syncflows() -> None:
    obj = kcp_deployment()
    _, secret = copy_bodies(obj, CLUSTER, "base-ns-3", "agent")
    key = state.state_key(CLUSTER, "", "ns-3", "d-7")
    ours = state.state_secret(
        "syncflow", CLUSTER, "apps/v1", "Deployment", "ns-3", "d-7", {key: managed_content(obj)}
    )

    assert secret == ours
    assert state.read_state(secret, key) == managed_content(obj)
