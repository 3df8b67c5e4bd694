"""Publish mode, object sync (issue 6), end to end: two devclusters, real Redis, real worker, beat and
watch processes. Each test publishes its own CRD so tests do not see each other's objects."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

from syncflow.sync.naming import sha1_hex
from tests.support.publish_env import CLEANUP, Published, PublishEnv, cluster_of, ok
from tests.support.waiting import wait_for

SHARES_PUBLISH_ENV = True  # see tests/publish/conftest.py


def test_object_synced_with_custom_naming_and_status_back(publish_env: PublishEnv) -> None:
    env = publish_env
    g = Published(
        env,
        "custom",
        "custom.example.com",
        "customs",
        "Custom",
        naming={
            "namespace": "synced-{{ .Object.metadata.namespace }}",
            "name": "{{ .Object.metadata.name }}",
        },
    )
    g.create("team-1", "first", {"size": 1}, labels={"app": "demo"})
    cluster = cluster_of(env, "team-1")
    copy = g.wait_copy(cluster, "first")
    assert copy["metadata"]["namespace"] == "synced-default" and copy["metadata"]["name"] == "first"
    assert copy["spec"] == {"size": 1}
    assert copy["metadata"]["labels"]["app"] == "demo"
    assert copy["metadata"]["labels"]["syncagent.kcp.io/agent-name"] == env.agent_name
    assert copy["metadata"]["annotations"]["syncagent.kcp.io/remote-object-name"] == "first"
    team = env.workspace("root:org:team-1")
    remote = team.get(g.kcp_path(name="first"))
    assert CLEANUP in remote["metadata"]["finalizers"]
    env.service.merge_patch(
        f"/apis/{g.group}/v1/namespaces/synced-default/{g.plural}/first/status",
        {"status": {"phase": "Ready"}},
    )
    wait_for(
        lambda: team.get(g.kcp_path(name="first")).get("status") == {"phase": "Ready"},
        timeout=30,
        what=lambda: f"status back in kcp\n{env.agent.logs()}",
    )


def test_same_name_in_two_workspaces_gives_two_copies(publish_env: PublishEnv) -> None:
    env = publish_env
    g = Published(env, "twins", "twins.example.com", "twins", "Twin")
    long_name = "a" * 200
    for team in ("team-1", "team-2"):
        g.create(team, "same", {"team": team})
        g.create(team, long_name, {"long": True})
    one, two = cluster_of(env, "team-1"), cluster_of(env, "team-2")
    first, second = g.wait_copy(one, "same"), g.wait_copy(two, "same")
    assert first["metadata"]["namespace"] == one and second["metadata"]["namespace"] == two
    assert first["spec"] == {"team": "team-1"} and second["spec"] == {"team": "team-2"}
    expected = f"{_sha3short('default')}-{_sha3short('same')}"
    assert first["metadata"]["name"] == expected == second["metadata"]["name"]
    assert len(g.wait_copy(one, long_name)["metadata"]["name"]) == 41


def _sha3short(value: str) -> str:
    return hashlib.sha3_256(value.encode()).hexdigest()[:20]


def test_workspace_paths_and_filters(publish_env: PublishEnv) -> None:
    env = publish_env
    g = Published(
        env,
        "filtered",
        "filtered.example.com",
        "filtereds",
        "Filtered",
        enableWorkspacePaths=True,
        filter={"resource": {"matchLabels": {"sync": "yes"}}, "namespace": {"matchLabels": {"team": "blue"}}},
    )
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "wanted", {"x": 1}, labels={"sync": "yes"}, namespace="blue-ns")
    env.workspace("root:org:team-1").merge_patch(
        "/api/v1/namespaces/blue-ns", {"metadata": {"labels": {"team": "blue"}}}
    )
    g.create("team-1", "unlabelled", {"x": 2}, namespace="blue-ns")
    g.create("team-1", "wrong-ns", {"x": 3}, labels={"sync": "yes"})
    copy = g.wait_copy(cluster, "wanted", namespace="blue-ns")
    assert (
        copy["metadata"]["annotations"]["syncagent.kcp.io/remote-object-workspace-path"] == "root:org:team-1"
    )
    # the other two never get a copy, and keep no finalizer of ours
    g.create("team-1", "marker", {"x": 4}, labels={"sync": "yes"}, namespace="blue-ns")
    g.wait_copy(cluster, "marker", namespace="blue-ns")
    assert g.copy_of(cluster, "unlabelled", "blue-ns") is None and g.copy_of(cluster, "wrong-ns") is None
    team = env.workspace("root:org:team-1")
    assert CLEANUP not in (team.get(g.kcp_path("blue-ns", "unlabelled"))["metadata"].get("finalizers") or [])


def test_three_way_merge_keeps_local_edits(publish_env: PublishEnv) -> None:
    env = publish_env
    g = Published(env, "merged", "merged.example.com", "mergeds", "Merged")
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "m", {"replicas": 1, "image": "v1"})
    copy = g.wait_copy(cluster, "m")
    local = (
        f"/apis/{g.group}/v1/namespaces/{copy['metadata']['namespace']}/{g.plural}/{copy['metadata']['name']}"
    )
    env.service.merge_patch(local, {"spec": {"replicas": 5, "injected": "by-controller"}})
    team = env.workspace("root:org:team-1")
    team.merge_patch(g.kcp_path(name="m"), {"spec": {"image": "v2"}})
    updated = g.wait_copy(cluster, "m", check=lambda c: c["spec"].get("image") == "v2")
    assert updated["spec"]["replicas"] == 5 and updated["spec"]["injected"] == "by-controller"
    team.merge_patch(g.kcp_path(name="m"), {"spec": {"replicas": 2}})
    final = g.wait_copy(cluster, "m", check=lambda c: c["spec"].get("replicas") == 2)
    assert final["spec"]["image"] == "v2" and final["spec"]["injected"] == "by-controller"


def test_deletion_removes_copy_then_finalizer_then_object(publish_env: PublishEnv) -> None:
    env = publish_env
    g = Published(env, "doomed", "doomed.example.com", "dooms", "Doom")
    cluster = cluster_of(env, "team-2")
    g.create("team-2", "bye", {"a": 1})
    g.wait_copy(cluster, "bye")
    team = env.workspace("root:org:team-2")
    team.delete(g.kcp_path(name="bye"))
    wait_for(
        lambda: not ok(team, g.kcp_path(name="bye")),
        timeout=30,
        what=lambda: f"the kcp object to be gone\n{env.agent.logs()}",
    )
    assert g.copy_of(cluster, "bye") is None
    secrets = (
        env.service.get(
            "/api/v1/namespaces/syncflow/secrets",
            labelSelector=f"syncagent.kcp.io/remote-object-cluster={cluster}",
        ).get("items")
        or []
    )
    assert not [
        s
        for s in secrets
        if s["metadata"]["labels"].get("syncagent.kcp.io/remote-object-name-hash") == sha1_hex("bye")
    ]


def test_existing_local_object_is_adopted(publish_env: PublishEnv) -> None:
    env = publish_env
    g = Published(
        env,
        "adopt",
        "adopt.example.com",
        "adopts",
        "Adopt",
        naming={"namespace": "adopted", "name": "{{ .Object.metadata.name }}"},
    )
    env.apply(env.service, "/api/v1/namespaces", {"metadata": {"name": "adopted"}})
    before = env.service.create(
        f"/apis/{g.group}/v1/namespaces/adopted/{g.plural}",
        {
            "apiVersion": f"{g.group}/v1",
            "kind": g.kind,
            "metadata": {"name": "pre"},
            "spec": {"old": True, "precious": "local", "nested": {"keep": 1, "set": 0}},
        },
    )
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "pre", {"new": True, "nested": {"set": 2}})
    copy = g.wait_copy(cluster, "pre", check=lambda c: c["spec"].get("new") is True)
    assert copy["metadata"]["uid"] == before["metadata"]["uid"]
    # adoption merges like any update: fields only set locally survive, kcp's fields win
    assert copy["spec"] == {"old": True, "precious": "local", "new": True, "nested": {"keep": 1, "set": 2}}
    assert len([i for i in g.local_list() if i["metadata"]["name"] == "pre"]) == 1


def test_namespace_terminating_is_retried_never_parked(publish_env: PublishEnv) -> None:
    """A 403 because the target namespace is being terminated clears by itself (api-syncagent retries
    it): the key backs off, is never parked, and the copy lands once the namespace has gone."""
    env = publish_env
    g = Published(
        env,
        "held",
        "held.example.com",
        "helds",
        "Held",
        naming={"namespace": "held-ns", "name": "{{ .Object.metadata.name }}"},
    )
    env.apply(env.service, "/api/v1/namespaces", {"metadata": {"name": "held-ns"}})
    env.service.create(
        "/api/v1/namespaces/held-ns/configmaps",
        {"metadata": {"name": "blocker", "finalizers": ["example.com/hold"]}},
    )
    env.service.delete("/api/v1/namespaces/held-ns")  # stays Terminating: creating in it is forbidden (403)
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "blocked", {"a": 1})
    key = f"sync/held/{cluster}/default/blocked"
    syncflow = [str(Path(sys.executable).parent / "syncflow")]

    def retried() -> str | None:
        shown = subprocess.run(
            [*syncflow, "failures", "show", key],
            env=env.agent.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,  # no failure recorded yet: exit 1
        ).stdout
        attempts = re.search(r"^attempts: (\d+)$", shown, re.MULTILINE)
        return shown if attempts and int(attempts.group(1)) >= 3 else None

    shown = wait_for(retried, timeout=60, what=lambda: f"{key} to be retried\n{env.agent.logs()}")
    assert "parked: no (backing off)" in shown and "being terminated" in shown
    assert env.parked(key) is None
    env.service.merge_patch(
        "/api/v1/namespaces/held-ns/configmaps/blocker", {"metadata": {"finalizers": None}}
    )
    assert g.wait_copy(cluster, "blocked")["metadata"]["namespace"] == "held-ns"
    assert env.parked(key) is None
