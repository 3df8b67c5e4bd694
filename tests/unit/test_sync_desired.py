"""The desired local copy: sync metadata, exclusions, stripping and the managed content."""

from __future__ import annotations

from typing import Any

from syncflow.sync import metadata as md
from syncflow.sync.desired import (
    build_desired,
    copy_selector,
    managed_content,
    remote_annotations,
    remote_labels,
    strip,
)
from syncflow.sync.naming import sha1_hex
from syncflow.util.selectors import LabelSelector

NAME_HASH = "c346c8ceb5d104cc783d09b95e8ea7032c190948"


def kcp_object() -> dict[str, Any]:
    return {
        "apiVersion": "remote.example.corp/v1alpha1",
        "kind": "RemoteThing",
        "metadata": {
            "name": "my-test-thing",
            "namespace": "team-a",
            "uid": "u-1",
            "resourceVersion": "17",
            "generation": 3,
            "creationTimestamp": "2026-11-25T10:00:00Z",
            "deletionGracePeriodSeconds": 30,
            "selfLink": "/x",
            "finalizers": [md.CLEANUP_FINALIZER],
            "ownerReferences": [{"kind": "X", "name": "o", "uid": "u-0", "apiVersion": "v1"}],
            "managedFields": [{"manager": "kubectl"}],
            "generateName": "my-",
            "labels": {
                "app": "demo",
                md.REMOTE_CLUSTER_LABEL: "spoofed",
                md.AGENT_LABEL: "other-agent",
                "claimed.internal.apis.kcp.io/abc": "x",
            },
            "annotations": {
                "note": "keep",
                md.KCP_CLUSTER_ANNOTATION: "root",
                md.LAST_APPLIED_ANNOTATION: "{}",
                "related-resources.syncagent.kcp.io/tls.0": "{}",
                md.REMOTE_NAME_ANNOTATION: "spoofed",
            },
        },
        "spec": {"username": "Miss Scarlet", "list": [1, 2]},
        "status": {"phase": "Ready"},
    }


def desired(**overrides: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "local_api_version": "example.corp/v1",
        "local_kind": "Thing",
        "local_namespace": "cluster1",
        "local_name": "local-name",
        "cluster": "cluster1",
        "workspace_path": None,
        "agent": "my-agent",
    }
    args.update(overrides)
    return build_desired(kcp_object(), **args)


def test_sha1_golden_value() -> None:
    assert sha1_hex("my-test-thing") == NAME_HASH


def test_remote_labels_of_a_namespaced_object() -> None:
    assert remote_labels("cluster1", "team-a", "my-test-thing", "my-agent") == {
        "syncagent.kcp.io/agent-name": "my-agent",
        "syncagent.kcp.io/remote-object-cluster": "cluster1",
        "syncagent.kcp.io/remote-object-name-hash": NAME_HASH,
        "syncagent.kcp.io/remote-object-namespace-hash": sha1_hex("team-a"),
    }


def test_remote_labels_of_a_cluster_scoped_object_have_no_namespace_hash() -> None:
    labels = remote_labels("cluster1", "", "my-test-thing", "a")
    assert md.REMOTE_NAMESPACE_HASH_LABEL not in labels
    assert labels[md.REMOTE_NAME_HASH_LABEL] == NAME_HASH


def test_remote_annotations() -> None:
    assert remote_annotations("team-a", "thing", "root:org:ws") == {
        md.REMOTE_NAME_ANNOTATION: "thing",
        md.REMOTE_NAMESPACE_ANNOTATION: "team-a",
        md.REMOTE_WORKSPACE_PATH_ANNOTATION: "root:org:ws",
    }
    assert remote_annotations("", "thing", None) == {md.REMOTE_NAME_ANNOTATION: "thing"}


def test_copy_selector_finds_exactly_the_copy() -> None:
    text = copy_selector("cluster1", "team-a", "my-test-thing")
    assert text == (
        f"{md.REMOTE_CLUSTER_LABEL}=cluster1,{md.REMOTE_NAME_HASH_LABEL}={NAME_HASH},"
        f"{md.REMOTE_NAMESPACE_HASH_LABEL}={sha1_hex('team-a')}"
    )
    selector = LabelSelector.parse(text)
    copy_labels = desired()["metadata"]["labels"]
    assert selector.matches(copy_labels)
    assert not selector.matches({**copy_labels, md.REMOTE_CLUSTER_LABEL: "cluster2"})


def test_copy_selector_of_a_cluster_scoped_object() -> None:
    assert (
        copy_selector("c", "", "n")
        == f"{md.REMOTE_CLUSTER_LABEL}=c,{md.REMOTE_NAME_HASH_LABEL}={sha1_hex('n')}"
    )


def test_strip_removes_server_metadata_and_drops_only_what_is_asked() -> None:
    obj = kcp_object()
    stripped = strip(obj)
    assert set(stripped["metadata"]) == {"name", "namespace", "generateName", "labels", "annotations"}
    assert stripped["status"] == {"phase": "Ready"}
    assert "status" not in strip(obj, drop=("status",))
    assert obj["metadata"]["uid"] == "u-1"  # the input is untouched
    stripped["spec"]["list"].append(3)
    assert obj["spec"]["list"] == [1, 2]  # and deep-copied


def test_build_desired_projects_names_and_gvk_and_drops_status() -> None:
    obj = desired()
    assert obj["apiVersion"] == "example.corp/v1"
    assert obj["kind"] == "Thing"
    assert obj["metadata"]["name"] == "local-name"
    assert obj["metadata"]["namespace"] == "cluster1"
    assert obj["spec"] == {"username": "Miss Scarlet", "list": [1, 2]}
    assert "status" not in obj
    assert set(obj["metadata"]) == {"name", "namespace", "labels", "annotations"}


def test_build_desired_copies_user_metadata_except_excluded_keys() -> None:
    meta = desired(workspace_path="root:org")["metadata"]
    assert meta["labels"] == {
        "app": "demo",
        **remote_labels("cluster1", "team-a", "my-test-thing", "my-agent"),
    }
    assert meta["annotations"] == {
        "note": "keep",
        md.REMOTE_NAME_ANNOTATION: "my-test-thing",
        md.REMOTE_NAMESPACE_ANNOTATION: "team-a",
        md.REMOTE_WORKSPACE_PATH_ANNOTATION: "root:org",
    }


def test_build_desired_for_a_cluster_scoped_local_resource() -> None:
    meta = desired(local_namespace="")["metadata"]
    assert "namespace" not in meta
    assert meta["annotations"][md.REMOTE_NAMESPACE_ANNOTATION] == "team-a"


def test_managed_content_is_the_user_visible_part() -> None:
    obj = kcp_object()
    obj["scale"] = {"replicas": 1}
    content = managed_content(obj)
    assert content == {
        "apiVersion": "remote.example.corp/v1alpha1",
        "kind": "RemoteThing",
        "metadata": {
            "name": "my-test-thing",
            "namespace": "team-a",
            "labels": {"app": "demo"},
            "annotations": {"note": "keep"},
        },
        "spec": {"username": "Miss Scarlet", "list": [1, 2]},
    }


def test_managed_content_omits_empty_metadata_maps() -> None:
    content = managed_content({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "labels": {}}})
    assert content == {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}}
