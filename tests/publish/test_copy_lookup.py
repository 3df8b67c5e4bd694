"""Publish mode: how a sync finds an object's copy and its namespace (issue 16). The copy is read where
the naming rule puts it; a copy under another name (renamed rule, legacy copy) is still found by its
labels, never duplicated; a namespace remembered to exist but deleted since is created again."""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException

from syncflow.sync.desired import remote_annotations, remote_labels
from syncflow.sync.state import state_secret
from tests.support.publish_env import Published, PublishEnv, cluster_of
from tests.support.waiting import wait_for

SHARES_PUBLISH_ENV = True  # see tests/publish/conftest.py


def test_a_copy_under_another_name_is_updated_not_duplicated(publish_env: PublishEnv) -> None:
    env = publish_env
    g = Published(
        env,
        "legacy",
        "legacy.example.com",
        "legacies",
        "Legacy",
        naming={"namespace": "legacy-ns", "name": "{{ .Object.metadata.name }}"},
    )
    cluster = cluster_of(env, "team-1")
    env.apply(env.service, "/api/v1/namespaces", {"metadata": {"name": "legacy-ns"}})
    old = env.service.create(
        f"/apis/{g.group}/v1/namespaces/legacy-ns/{g.plural}",
        {
            "apiVersion": f"{g.group}/v1",
            "kind": g.kind,
            "metadata": {
                "name": "old-name",  # what an earlier naming rule made
                "labels": remote_labels(cluster, "default", "moved", env.agent_name),
                "annotations": remote_annotations("default", "moved", None),
            },
            "spec": {"v": 0},
        },
    )
    secret = state_secret("syncflow", cluster, f"{g.group}/v1", g.kind, "default", "moved", {})
    env.service.create("/api/v1/namespaces/syncflow/secrets", secret)  # a copy was made once
    g.create("team-1", "moved", {"v": 1})
    copy = g.wait_copy(cluster, "moved", check=lambda c: c["spec"].get("v") == 1)
    assert copy["metadata"]["uid"] == old["metadata"]["uid"]
    assert [i["metadata"]["name"] for i in g.local_list()] == ["old-name"]


def test_a_deleted_target_namespace_is_created_again(publish_env: PublishEnv) -> None:
    env = publish_env
    g = Published(
        env,
        "nsgone",
        "nsgone.example.com",
        "nsgones",
        "NsGone",
        naming={"namespace": "gone-ns", "name": "{{ .Object.metadata.name }}"},
    )
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "first", {"v": 1})
    g.wait_copy(cluster, "first")  # the worker now remembers gone-ns exists
    env.service.delete("/api/v1/namespaces/gone-ns")

    def gone() -> bool:
        try:
            env.service.get("/api/v1/namespaces/gone-ns")
        except ApiException as exc:
            return exc.status == 404
        return False

    wait_for(gone, timeout=30, what="gone-ns to be deleted")
    g.create("team-1", "second", {"v": 2})
    copy = g.wait_copy(cluster, "second")
    assert copy["metadata"]["namespace"] == "gone-ns"
    assert env.service.get("/api/v1/namespaces/gone-ns")["metadata"]["name"] == "gone-ns"
