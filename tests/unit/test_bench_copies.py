"""The benchmark's bare-script baseline writes what syncflow writes (bench/copies.py)."""

from __future__ import annotations

import base64
import json

from bench.copies import CopyWrites, engine_copy, engine_state_secret
from syncflow.sync import metadata as md
from syncflow.sync import state
from syncflow.sync.desired import managed_content, remote_labels

CLUSTER = "1ly0k28vbizkcm75"
RESOURCE = "apis/widgets.bench.io/v1/namespaces/default/widgets"
SOURCE = {
    "apiVersion": "widgets.bench.io/v1",
    "kind": "Widget",
    "metadata": {"name": "base-7", "labels": {"bench-run": "base"}},
    "spec": {"size": 3, "color": "x" * 64},
}
COPY = {**SOURCE, "metadata": {"name": "base-7", "labels": {"bench-run": "base-copy"}}}


def test_the_finalizer_patch_goes_through_the_virtual_workspace_like_syncflows() -> None:
    writes = CopyWrites("agent", "/services/apiexport/root-org/services", RESOURCE)

    assert writes.kcp_path("root:org:team-0", CLUSTER, "base-7") == (
        f"/services/apiexport/root-org/services/clusters/{CLUSTER}/{RESOURCE}/base-7"
    )
    assert CopyWrites("agent", "", RESOURCE).kcp_path("root:org:team-0", CLUSTER, "base-7") == (
        f"/clusters/root:org:team-0/{RESOURCE}/base-7"
    )


def test_the_state_secret_has_syncflows_labels_content_and_sizes() -> None:
    _, secret = CopyWrites("agent", "", RESOURCE).bodies(CLUSTER, SOURCE, COPY)
    meta = {"labels": {"bench-run": "base"}, "name": "base-7", "namespace": "default"}
    content = {**SOURCE, "metadata": meta}
    ours = state.state_secret(
        "syncflow", CLUSTER, "widgets.bench.io/v1", "Widget", "default", "base-7", {"k": content}
    )

    assert secret["metadata"]["labels"] == ours["metadata"]["labels"]
    assert len(secret["metadata"]["name"]) == len(ours["metadata"]["name"])
    [(data_key, value)] = secret["data"].items()
    assert len(data_key) == len(state.state_key(CLUSTER, "", "default", "base-7"))
    assert value == ours["data"]["k"]
    assert json.loads(base64.b64decode(value)) == content


def test_the_copy_carries_syncflows_labels_and_annotations() -> None:
    copy, _ = CopyWrites("agent", "", RESOURCE).bodies(CLUSTER, SOURCE, COPY)
    labels, annotations = copy["metadata"]["labels"], copy["metadata"]["annotations"]

    assert labels[md.AGENT_LABEL] == "agent"
    assert labels[md.REMOTE_CLUSTER_LABEL] == CLUSTER
    assert (
        labels[md.REMOTE_NAME_HASH_LABEL]
        == state.state_labels(CLUSTER, "default", "base-7")[md.REMOTE_NAME_HASH_LABEL]
    )
    assert labels["bench-run"] == "base-copy"
    assert annotations == {md.REMOTE_NAME_ANNOTATION: "base-7", md.REMOTE_NAMESPACE_ANNOTATION: "default"}
    assert copy["spec"] == SOURCE["spec"]


def test_the_lean_writes_of_earlier_rounds_stay_smaller() -> None:
    writes = CopyWrites("agent", "", RESOURCE)
    lean_copy, lean_secret = writes.lean_bodies(CLUSTER, SOURCE, COPY)
    copy, secret = writes.bodies(CLUSTER, SOURCE, COPY)

    assert lean_secret["data"] == {"state": "e30="}
    assert len(json.dumps(lean_copy)) < len(json.dumps(copy))
    assert len(json.dumps(lean_secret)) < len(json.dumps(secret))


def test_the_engine_helpers_copy_a_config_map_as_the_engine_does() -> None:
    served = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cm-00007",
            "namespace": "base",
            "labels": {"bench-run": "base", "workloads.kcp.dev/cluster": "east"},
            "annotations": {md.KCP_CLUSTER_ANNOTATION: CLUSTER},
            "uid": "5e1f",
            "resourceVersion": "812",
            "finalizers": ["workload.kcp.dev/syncer-east"],
        },
        "data": {"k": "v"},
    }

    copy = engine_copy(served, cluster=CLUSTER, namespace="base", agent="agent")
    secret = engine_state_secret(served, cluster=CLUSTER, state_namespace="default")

    assert copy == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cm-00007",
            "namespace": "base",
            "labels": {
                "bench-run": "base",
                "workloads.kcp.dev/cluster": "east",
                **remote_labels(CLUSTER, "base", "cm-00007", "agent"),
            },
            "annotations": {md.REMOTE_NAME_ANNOTATION: "cm-00007", md.REMOTE_NAMESPACE_ANNOTATION: "base"},
        },
        "data": {"k": "v"},
    }
    key = state.state_key(CLUSTER, "", "base", "cm-00007")
    assert secret["metadata"]["namespace"] == "default"
    assert secret["metadata"]["labels"] == state.state_labels(CLUSTER, "base", "cm-00007")
    assert state.read_state(secret, key) == managed_content(served)
