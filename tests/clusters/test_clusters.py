"""Clusters mode end to end (issue 12): Clusters registered with kubeconfigs get probed and their types
pulled into kcp, labelled objects go to their cluster and come back with status, the splitter spreads
Deployments over the Ready clusters and rebalances as clusters come and go, all without restarts."""

from __future__ import annotations

from typing import Any

from tests.clusters.conftest import (
    CRDS,
    LABEL,
    WIDGETS,
    ClustersEnv,
    deployment,
    exists,
    play_deployment_controller,
)
from tests.support.waiting import wait_for

SECRET = "t0ken-that-must-never-show"


def test_two_clusters_become_ready_and_a_broken_kubeconfig_says_why_without_the_secret(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    env.register("east")
    env.register("west")
    broken = f"apiVersion: v1\nusers:\n- name: u\n  user: {{token: {SECRET}}}\ncontexts: [\n"
    env.register("broken", broken)
    assert env.wait_ready("east")["reason"] == "Connected"
    env.wait_ready("west")
    condition = env.wait_ready("broken", "False")
    assert condition["reason"] == "InvalidKubeconfig"
    assert "not valid YAML" in condition["message"] and SECRET not in condition["message"]


def test_types_are_pulled_into_kcp_with_the_schema_every_ready_cluster_takes(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    for name in ("east", "west"):
        for resource in ("deployments.apps", "configmaps", WIDGETS):
            wait_for(
                lambda n=name, r=resource: env.synced(n, r).get("state") == "Accepted",
                timeout=60,
                what=lambda n=name, r=resource: (
                    f"{r} Accepted on {n}: {env.synced(n, r)}\n{env.agent.logs()}"
                ),
            )
    assert exists(env.kcp, "/apis/apps/v1/deployments")  # served by kcp, or pulled into it as a CRD
    crd = env.kcp.get(f"{CRDS}/{WIDGETS}")
    assert crd["metadata"]["labels"]["workload.kcp.dev/negotiated"] == "true"
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert set(schema["properties"]["spec"]["properties"]) == {"size"}  # color: east only
    assert env.synced("east", WIDGETS)["versions"] == ["v1"]
    assert env.synced("broken", WIDGETS) == {}  # a cluster that is not Ready is not judged


def _namespace(env: ClustersEnv, name: str) -> None:
    if not exists(env.kcp, f"/api/v1/namespaces/{name}"):
        env.kcp.create("/api/v1/namespaces", {"metadata": {"name": name}})


def _copy(env: ClustersEnv, cluster: str, path: str, **kw: Any) -> dict[str, Any]:
    return wait_for(
        lambda: exists(env.physical[cluster].api, path) and env.physical[cluster].api.get(path),
        what=lambda: f"{path} in {cluster}\n{env.agent.logs()}",
        **{"timeout": 30, **kw},
    )


def _gone(env: ClustersEnv, cluster: str, path: str) -> None:
    wait_for(
        lambda: not exists(env.physical[cluster].api, path),
        timeout=30,
        what=lambda: f"{path} gone from {cluster}\n{env.agent.logs()}",
    )


def test_a_labelled_object_goes_to_its_cluster_only_and_moves_when_relabelled(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    _namespace(env, "apps")
    env.kcp.create(
        "/api/v1/namespaces/apps/configmaps",
        {"metadata": {"name": "settings", "labels": {LABEL: "east"}}, "data": {"k": "v"}},
    )
    path = "/api/v1/namespaces/apps/configmaps/settings"
    copy = _copy(env, "east", path)
    assert copy["data"] == {"k": "v"}
    assert not exists(env.physical["west"].api, path)
    assert env.kcp.get(path)["metadata"]["finalizers"] == ["workload.kcp.dev/syncer-east"]
    env.kcp.merge_patch(path, {"metadata": {"labels": {LABEL: "west"}}, "data": {"k": "moved"}})
    wait_for(
        lambda: (
            exists(env.physical["west"].api, path)
            and env.physical["west"].api.get(path)["data"] == {"k": "moved"}
        ),
        timeout=30,
        what=lambda: f"the moved copy in west\n{env.agent.logs()}",
    )
    _gone(env, "east", path)
    wait_for(
        lambda: env.kcp.get(path)["metadata"].get("finalizers") == ["workload.kcp.dev/syncer-west"],
        timeout=30,
    )
    env.kcp.delete(path)
    _gone(env, "west", path)
    wait_for(lambda: not exists(env.kcp, path), timeout=30, what="the kcp object to be released and gone")


def test_a_labelled_deployment_runs_in_its_cluster_and_its_status_comes_back(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    _namespace(env, "apps")
    env.kcp.create("/apis/apps/v1/namespaces/apps/deployments", deployment("web", 2, labels={LABEL: "west"}))
    path = "/apis/apps/v1/namespaces/apps/deployments/web"
    _copy(env, "west", path)
    assert not exists(env.physical["east"].api, path)
    play_deployment_controller(env.physical["west"].api, path)
    wait_for(
        lambda: (env.kcp.get(path).get("status") or {}).get("readyReplicas") == 2,
        timeout=30,
        what=lambda: f"the status of web back in kcp: {env.kcp.get(path).get('status')}\n{env.agent.logs()}",
    )
