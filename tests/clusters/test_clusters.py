"""Clusters mode end to end (issue 12): Clusters registered with kubeconfigs get probed and their types
pulled into kcp, labelled objects go to their cluster and come back with status, the splitter spreads
Deployments over the Ready clusters and rebalances as clusters come and go, all without restarts."""

from __future__ import annotations

import base64
import contextlib
import re
import signal
from typing import Any

import kubernetes_validate
import yaml
from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.layout import CONTROL_QUEUE, QueueLayout, forget_agent
from tests.support.clusters_env import (
    CLUSTERS,
    LABEL,
    PROBE_PERIOD,
    REDIS_URL,
    RESOURCES,
    SPLIT_ANNOTATION,
    WIDGETS,
    WORKSPACE,
    ClustersEnv,
    deployment,
    play_deployment_controller,
)
from tests.support.waiting import wait_for

SECRET = "t0ken-that-must-never-show"
APIS = "/apis/apis.kcp.io/v1alpha1"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


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


def _hostile(server: str = "https://127.0.0.1:1", **sections: Any) -> str:
    """A kubeconfig holding ``SECRET`` whose top-level ``sections`` replace the valid ones."""
    valid = {
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": SECRET}}],
    }
    return yaml.safe_dump({**valid, **sections})


HOSTILE = {
    "huge": ("[" * 120_000, "longer than 65536 bytes"),
    "deep": (f"# {SECRET}\n" + "[" * 30 + "]" * 30, "nested deeper than 20 levels (line 2, column 21)"),
    "mistyped": (_hostile(contexts=5), "contexts: want a list of {name, context}"),
    "metadata": (
        _hostile("http://169.254.169.254/latest/meta-data/"),
        "the cluster's server is a link-local or cloud metadata address",
    ),
}


def test_hostile_kubeconfigs_are_invalid_at_their_first_probe_and_never_retried(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    for name, (text, _) in HOSTILE.items():
        env.register(name, text)
    for name, (_, expected) in HOSTILE.items():
        condition = env.wait_ready(name, "False", timeout=15)
        assert condition["reason"] == "InvalidKubeconfig", (name, condition)
        assert f"spec.kubeconfig: {expected}" in condition["message"], (name, condition)
        assert SECRET not in condition["message"]
    log = env.work / "worker.log"

    def runs() -> dict[str, list[str]]:
        lines = log.read_text().splitlines()
        return {
            n: [line for line in lines if re.search(rf"task\.done key=cluster/\S+//{n} ", line)]
            for n in HOSTILE
        }

    def probed_thrice() -> dict[str, list[str]] | None:  # at creation, then at each probe period
        found = runs()
        return found if all(len(lines) >= 3 for lines in found.values()) else None

    found = wait_for(
        probed_thrice, timeout=30, what=lambda: f"three probes of each: {runs()}\n{env.agent.logs()}"
    )
    for name, lines in found.items():  # each probe ends its key: no error, no retry, no attempt kept
        assert all(" outcome=ok " in line and "attempts=" not in line for line in lines), lines
        key = re.search(r"key=(\S+)", lines[0])[1]  # type: ignore[index]
        assert not env.redis.hexists(QueueLayout(env.agent_name, CONTROL_QUEUE).key("F"), key), name
    for name in HOSTILE:
        env.kcp.delete(f"{CLUSTERS}/{name}")
    for name in HOSTILE:
        wait_for(
            lambda n=name: not env.kcp.exists(f"{CLUSTERS}/{n}"), timeout=30, what=f"Cluster {name} gone"
        )


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
    assert env.kcp.exists("/apis/apps/v1/deployments")  # served by kcp, or pulled into it as a CRD
    export = env.kcp.get(f"{APIS}/apiexports/syncflow-clusters")
    assert export["metadata"]["labels"]["workload.kcp.dev/negotiated"] == "true"
    (name,) = [n for n in export["spec"]["latestResourceSchemas"] if n.endswith(f".{WIDGETS}")]
    schema = env.kcp.get(f"{APIS}/apiresourceschemas/{name}")["spec"]["versions"][0]["schema"]
    assert set(schema["properties"]["spec"]["properties"]) == {"size"}  # color: east only
    assert env.kcp.exists("/apis/demo.syncflow.dev/v1/widgets")  # served in the workspace (bound)
    assert env.synced("east", WIDGETS)["versions"] == ["v1"]
    assert env.synced("broken", WIDGETS) == {}  # a cluster that is not Ready is not judged


def _namespace(env: ClustersEnv, name: str) -> None:
    if not env.kcp.exists(f"/api/v1/namespaces/{name}"):
        env.kcp.create("/api/v1/namespaces", {"metadata": {"name": name}})


def _copy(env: ClustersEnv, cluster: str, path: str, **kw: Any) -> dict[str, Any]:
    return wait_for(
        lambda: env.physical[cluster].api.exists(path) and env.physical[cluster].api.get(path),
        what=lambda: f"{path} in {cluster}\n{env.agent.logs()}",
        **{"timeout": 30, **kw},
    )


def _gone(env: ClustersEnv, cluster: str, path: str) -> None:
    wait_for(
        lambda: not env.physical[cluster].api.exists(path),
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
    assert not env.physical["west"].api.exists(path)
    assert env.kcp.get(path)["metadata"]["finalizers"] == ["workload.kcp.dev/syncer-east"]
    env.kcp.merge_patch(path, {"metadata": {"labels": {LABEL: "west"}}, "data": {"k": "moved"}})
    wait_for(
        lambda: (
            env.physical["west"].api.exists(path)
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
    wait_for(lambda: not env.kcp.exists(path), timeout=30, what="the kcp object to be released and gone")


def test_a_labelled_deployment_runs_in_its_cluster_and_its_status_comes_back(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    _namespace(env, "apps")
    env.kcp.create("/apis/apps/v1/namespaces/apps/deployments", deployment("web", 2, labels={LABEL: "west"}))
    path = "/apis/apps/v1/namespaces/apps/deployments/web"
    _copy(env, "west", path)
    assert not env.physical["east"].api.exists(path)
    play_deployment_controller(env.physical["west"].api, path)
    wait_for(
        lambda: (env.kcp.get(path).get("status") or {}).get("readyReplicas") == 2,
        timeout=30,
        what=lambda: f"the status of web back in kcp: {env.kcp.get(path).get('status')}\n{env.agent.logs()}",
    )


DEPLOYMENTS = "/apis/apps/v1/namespaces/apps/deployments"


def _replicas(env: ClustersEnv, name: str) -> int | None:
    path = f"{DEPLOYMENTS}/{name}"
    return int(env.kcp.get(path)["spec"]["replicas"]) if env.kcp.exists(path) else None


def _split_is(env: ClustersEnv, root: str, shares: dict[str, int], timeout: float = 30) -> None:
    """Wait until root's shard for each cluster has its share in kcp and in the cluster."""

    def matches() -> bool:
        for cluster, replicas in shares.items():
            path = f"{DEPLOYMENTS}/{root}--{cluster}"
            if _replicas(env, f"{root}--{cluster}") != replicas:
                return False
            api = env.physical[cluster].api
            if not api.exists(path) or api.get(path)["spec"]["replicas"] != replicas:
                return False
        return True

    wait_for(
        matches,
        timeout=timeout,
        what=lambda: (
            f"{root} split as {shares}: "
            + str({c: _replicas(env, f"{root}--{c}") for c in env.physical})
            + f"\n{env.agent.logs()}"
        ),
    )


def _ready_everywhere(env: ClustersEnv, root: str, clusters: list[str]) -> None:
    for cluster in clusters:
        play_deployment_controller(env.physical[cluster].api, f"{DEPLOYMENTS}/{root}--{cluster}")


def _root_status(env: ClustersEnv, root: str) -> dict[str, Any]:
    return env.kcp.get(f"{DEPLOYMENTS}/{root}").get("status") or {}


def test_a_deployment_is_split_over_the_ready_clusters_and_its_status_aggregated(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    env.kcp.create(DEPLOYMENTS, deployment("shop", 5))
    _split_is(env, "shop", {"east": 3, "west": 2})
    shard = env.kcp.get(f"{DEPLOYMENTS}/shop--east")
    root = env.kcp.get(f"{DEPLOYMENTS}/shop")
    assert shard["metadata"]["labels"][LABEL] == "east"
    assert shard["metadata"]["ownerReferences"][0]["uid"] == root["metadata"]["uid"]
    assert shard["spec"]["template"] == root["spec"]["template"]
    assert not env.kcp.exists(f"{DEPLOYMENTS}/shop--broken")  # not Ready: no shard
    _ready_everywhere(env, "shop", ["east", "west"])
    wait_for(
        lambda: _root_status(env, "shop").get("readyReplicas") == 5,
        timeout=30,
        what=lambda: f"5 ready replicas on the root: {_root_status(env, 'shop')}\n{env.agent.logs()}",
    )
    status = _root_status(env, "shop")
    assert status["replicas"] == status["availableReplicas"] == 5
    assert ("Available", "True") in [(c["type"], c["status"]) for c in status["conditions"]]
    env.kcp.merge_patch(f"{DEPLOYMENTS}/shop", {"spec": {"replicas": 7}})
    _split_is(env, "shop", {"east": 4, "west": 3})
    env.kcp.merge_patch(f"{DEPLOYMENTS}/shop", {"spec": {"replicas": 5}})
    _split_is(env, "shop", {"east": 3, "west": 2})


def _shards_unknown(env: ClustersEnv, root: str) -> dict[str, Any]:
    conditions = _root_status(env, root).get("conditions") or []
    return next((c for c in conditions if c["type"] == "ShardsUnknown"), {})


def test_a_cluster_that_stops_answering_turns_not_ready_and_its_replicas_move(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    env.physical["west"].stop()
    condition = env.wait_ready("west", "False", timeout=2 * PROBE_PERIOD + 2)  # within two probes
    assert condition["reason"] == "Unreachable"
    wait_for(lambda: _replicas(env, "shop--east") == 5 and _replicas(env, "shop--west") == 0, timeout=30)
    _split_is(env, "shop", {"east": 5})
    assert env.kcp.exists(f"{DEPLOYMENTS}/web")  # nothing in kcp is lost while west is away
    # east reports its 5 ready; west's shard last reported 2, which nobody can know still holds
    _ready_everywhere(env, "shop", ["east"])
    wait_for(
        lambda: (
            _root_status(env, "shop").get("readyReplicas") == 5
            and _shards_unknown(env, "shop").get("status") == "True"
        ),
        timeout=30,
        what=lambda: f"5 ready on the root, west unknown: {_root_status(env, 'shop')}\n{env.agent.logs()}",
    )
    status = _root_status(env, "shop")
    assert status["replicas"] == status["availableReplicas"] == 5  # never west's stale 2 on top
    assert _shards_unknown(env, "shop")["reason"] == "ShardStatusUnknown"
    assert _shards_unknown(env, "shop")["message"].endswith(
        "on 1 cluster(s) that are not Ready is unknown and not counted: west"
    )


def test_a_cluster_that_answers_again_is_rebalanced_and_resynced(clusters_env: ClustersEnv) -> None:
    env = clusters_env
    env.physical["west"].start()  # an empty cluster on the same address
    env.wait_ready("west", timeout=2 * PROBE_PERIOD + 10)
    _split_is(env, "shop", {"east": 3, "west": 2})
    wait_for(lambda: _shards_unknown(env, "shop").get("status") == "False", timeout=30)
    _copy(env, "west", f"{DEPLOYMENTS}/web")  # labelled for west before it went away: synced again


def test_a_third_cluster_added_at_runtime_takes_its_share_without_a_restart(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    pids = {name: process.pid for name, process in env.agent.running.items()}
    north = env.add_physical("north", token="n0rth-token")
    env.register("north", north.kubeconfig.replace("n0rth-token", "wrong-token"))
    condition = env.wait_ready("north", "False")
    assert condition["reason"] == "Unauthorized" and "wrong-token" not in condition["message"]
    env.register("north", north.kubeconfig)  # the fixed kubeconfig: the client is built again
    env.wait_ready("north")
    _split_is(env, "shop", {"east": 2, "north": 2, "west": 1})
    assert {name: process.pid for name, process in env.agent.running.items()} == pids
    assert all(process.poll() is None for process in env.agent.running.values())


def test_workers_scaled_from_one_to_three_while_syncing_three_clusters(clusters_env: ClustersEnv) -> None:
    env = clusters_env
    common = ("clusters", "--redis-url", REDIS_URL, "--role", "worker", "--workers", "1")
    env.agent.kill("worker", signal.SIGTERM)  # what it held goes back to the queue
    env.agent.start("worker-1", *common)
    _namespace(env, "load")
    clusters = ["east", "north", "west"]
    placed = {f"load-{i:03d}": clusters[i % 3] for i in range(60)}
    for index, (name, cluster) in enumerate(placed.items()):
        if index == 20:
            env.agent.start("worker-2", *common)
            env.agent.start("worker-3", *common)
            for n in (2, 3):
                wait_for(lambda n=n: " ready." in (env.work / f"worker-{n}.log").read_text(), timeout=60)
        body = {"metadata": {"name": name, "labels": {LABEL: cluster}}, "data": {"v": "1"}}
        env.kcp.create("/api/v1/namespaces/load/configmaps", body)
    for name in placed:
        env.kcp.merge_patch(f"/api/v1/namespaces/load/configmaps/{name}", {"data": {"v": "2"}})

    def copies(cluster: str) -> dict[str, str]:
        items = env.physical[cluster].api.get("/api/v1/namespaces/load/configmaps").get("items") or []
        return {
            i["metadata"]["name"]: i["data"]["v"] for i in items if i["metadata"]["name"].startswith("load-")
        }

    for cluster in clusters:
        wanted = {name: "2" for name, where in placed.items() if where == cluster}
        wait_for(
            lambda c=cluster, w=wanted: copies(c) == w,  # every update arrived, no copy in another cluster
            timeout=120,
            what=lambda c=cluster: f"the load copies in {c}: {len(copies(c))}\n{env.agent.logs()}",
        )
    logs = {n: (env.work / f"worker-{n}.log").read_text() for n in (1, 2, 3)}
    created = re.findall(r"sync\.created key=sync/\S+/load/(load-\d+) ", "".join(logs.values()))
    assert sorted(created) == sorted(placed)  # each copy created exactly once
    working = [n for n, text in logs.items() if re.search(r"task\.done key=sync/\S+/load/", text)]
    assert len(working) >= 2, working  # the added workers took a share


def test_deleting_the_root_deletes_its_shards_and_an_opted_out_root_has_none(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    env.kcp.delete(f"{DEPLOYMENTS}/shop")
    for cluster in ("east", "north", "west"):
        path = f"{DEPLOYMENTS}/shop--{cluster}"
        # 60 s: a key still leased by a worker the previous test stopped waits out its 30 s lease
        wait_for(lambda p=path: not env.kcp.exists(p), timeout=60, what=f"{path} deleted in kcp")
        _gone(env, cluster, path)
    env.kcp.create(DEPLOYMENTS, deployment("cart", 2))
    _split_is(env, "cart", {"east": 1, "north": 1, "west": 0})
    env.kcp.merge_patch(f"{DEPLOYMENTS}/cart", {"metadata": {"annotations": {SPLIT_ANNOTATION: "false"}}})
    for cluster in ("east", "north", "west"):
        wait_for(lambda c=cluster: not env.kcp.exists(f"{DEPLOYMENTS}/cart--{c}"), timeout=30)
    assert env.kcp.exists(f"{DEPLOYMENTS}/cart")


def _event(env: ClustersEnv, name: str, reason: str) -> dict[str, Any] | None:
    events = env.kcp.get("/api/v1/namespaces/apps/events").get("items") or []
    return next((e for e in events if e["involvedObject"]["name"] == name and e["reason"] == reason), None)


def test_objects_labelled_for_an_unknown_or_broken_cluster_wait_and_say_why(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    for name, cluster in (("lost", "ghost"), ("held", "broken")):
        body = {"metadata": {"name": name, "labels": {LABEL: cluster}}, "data": {"k": "v"}}
        env.kcp.create("/api/v1/namespaces/apps/configmaps", body)
    lost = wait_for(
        lambda: _event(env, "lost", "ClusterNotFound"), timeout=30, what="the ClusterNotFound event"
    )
    assert 'no Cluster "ghost"' in lost["message"]
    held = wait_for(
        lambda: _event(env, "held", "ClusterNotReady"), timeout=30, what="the ClusterNotReady event"
    )
    assert "not valid YAML" in held["message"]
    assert SECRET not in held["message"]
    for name in ("lost", "held"):  # they wait as they are: no finalizer, nothing synced anywhere
        assert not env.kcp.get(f"/api/v1/namespaces/apps/configmaps/{name}")["metadata"].get("finalizers")
        assert not any(
            p.api.exists(f"/api/v1/namespaces/apps/configmaps/{name}") for p in env.physical.values()
        )


def test_a_deleted_cluster_releases_its_objects_and_keeps_its_copies(clusters_env: ClustersEnv) -> None:
    env = clusters_env
    held = [n for n in (f"load-{i:03d}" for i in range(60)) if int(n[-3:]) % 3 == 1]  # placed on north
    env.kcp.delete(f"{CLUSTERS}/north")
    wait_for(
        lambda: not env.kcp.exists(f"{CLUSTERS}/north"),
        timeout=30,
        what=lambda: f"north gone\n{env.agent.logs()}",
    )
    for name in held:
        assert not env.kcp.get(f"/api/v1/namespaces/load/configmaps/{name}")["metadata"].get("finalizers")
        # --cluster-cleanup keep
        assert env.physical["north"].api.exists(f"/api/v1/namespaces/load/configmaps/{name}")
    env.kcp.delete(f"/api/v1/namespaces/load/configmaps/{held[0]}")
    wait_for(lambda: not env.kcp.exists(f"/api/v1/namespaces/load/configmaps/{held[0]}"), timeout=30)


def _status(call: Any) -> int:
    """The HTTP status of an API call: 200 when it succeeds, else the error's."""
    try:
        call()
    except ApiException as exc:
        return int(exc.status)
    return 200


def _pull_kubeconfig(env: ClustersEnv, objects: list[dict[str, Any]]) -> str:
    """The kcp kubeconfig a pull manifest gives its syncer (from its Secret), checked to hold none of
    the caller's credentials."""
    caller = yaml.safe_load(env.kcp_kubeconfig.read_text())
    credentials = [v for u in caller["users"] for k, v in u["user"].items() if k != "username"]
    assert credentials  # the caller's kcp kubeconfig holds a token: it must not travel
    decoded = [
        base64.b64decode(value).decode()
        for o in objects
        if o["kind"] == "Secret"
        for value in (o.get("data") or {}).values()
    ]
    everything = yaml.safe_dump_all(objects) + "".join(decoded)
    assert not any(c in everything for c in credentials)
    (text,) = decoded
    config = yaml.safe_load(text)
    (user,) = config["users"]
    assert list(user["user"]) == ["token"]  # a bearer token and nothing else
    return text


def test_a_pull_mode_cluster_is_synced_by_its_own_syncer_with_its_own_least_privilege_account(
    clusters_env: ClustersEnv,
) -> None:
    env = clusters_env
    north = env.physical["north"]
    env.register("north", north.kubeconfig, syncMode="Pull")
    # it answers, but Ready means a syncer runs in it: none yet
    not_yet = env.wait_ready("north", status="False")
    assert not_yet["reason"] == "NoSyncer" and "syncflow clusters manifest north" in not_yet["message"]
    manifest = env.work / "syncer.yaml"
    env.agent.start(
        "manifest",
        "clusters",
        "manifest",
        "north",
        "-o",
        str(manifest),
        "--agent-name",
        env.agent_name,
        "--resources",
        ",".join(RESOURCES),
    ).wait(timeout=60)
    assert "serviceaccount/syncflow-pull-north created" in (env.work / "manifest.log").read_text()
    objects = list(yaml.safe_load_all(manifest.read_text()))
    assert manifest.stat().st_mode & 0o077 == 0  # it holds a kcp kubeconfig
    for obj in objects:
        kubernetes_validate.validate(obj, "1.32.0", strict=True)
    (syncer,) = [
        c
        for o in objects
        if o["kind"] == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
        if c["name"] == "syncflow"
    ]
    assert {"name": "SYNCFLOW_ONLY_CLUSTER", "value": "north"} in syncer["env"]
    own_kubeconfig = env.work / "pull-kcp.kubeconfig"
    own_kubeconfig.write_text(_pull_kubeconfig(env, objects))

    # the account is the Cluster's: deleting the Cluster deletes it (kcp's garbage collector)
    uid = env.cluster("north")["metadata"]["uid"]
    for path in (
        "/api/v1/namespaces/default/serviceaccounts/syncflow-pull-north",
        f"{RBAC}/clusterroles/syncflow-pull-north",
        f"{RBAC}/clusterrolebindings/syncflow-pull-north",
    ):
        assert [o["uid"] for o in env.kcp.get(path)["metadata"]["ownerReferences"]] == [uid], path
    # what the account may do in the workspace: its own Cluster, the synced types, nothing else
    as_pull = JsonApi(for_cluster(load_client(str(own_kubeconfig)), WORKSPACE))
    assert as_pull.get(f"{CLUSTERS}/north")["metadata"]["uid"] == uid
    assert [
        c["metadata"]["name"] for c in as_pull.get(CLUSTERS, fieldSelector="metadata.name=north")["items"]
    ] == ["north"]
    assert _status(lambda: as_pull.get("/api/v1/namespaces/apps/configmaps")) == 200
    binding = {
        "metadata": {"name": "escalate"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "syncflow-pull-north", "namespace": "default"}],
    }
    refused = {
        "list secrets": lambda: as_pull.get("/api/v1/secrets"),
        "read a secret": lambda: as_pull.get("/api/v1/namespaces/default/secrets/syncflow-pull-north-token"),
        "create a ClusterRoleBinding": lambda: as_pull.create(f"{RBAC}/clusterrolebindings", binding),
        "update its ClusterRole": lambda: as_pull.merge_patch(f"{RBAC}/clusterroles/syncflow-pull-north", {}),
        "read another Cluster": lambda: as_pull.get(f"{CLUSTERS}/east"),
        "list every Cluster": lambda: as_pull.get(CLUSTERS),
        "change its Cluster's spec": lambda: as_pull.merge_patch(f"{CLUSTERS}/north", {"spec": {}}),
        "create an object to sync": lambda: as_pull.create(
            "/api/v1/namespaces/apps/configmaps", {"metadata": {"name": "nope"}}
        ),
    }
    assert {what: _status(call) for what, call in refused.items()} == {what: 403 for what in refused}

    # the syncer that manifest runs in the cluster, here run by hand with the manifest's kcp kubeconfig:
    # its own Redis, the cluster's kubeconfig
    own_redis = REDIS_URL.rsplit("/", 1)[0] + "/1"
    env.agent.start(
        "pull-syncer",
        "clusters",
        "--only-cluster",
        "north",
        "--kcp-kubeconfig",
        str(own_kubeconfig),
        "--cluster-kubeconfig",
        str(north.workdir / "kubeconfig"),
        "--redis-url",
        own_redis,
        "--workers",
        "1",
        "--data-dir",
        str(env.work / "pull"),
    )
    pulled_path = "/api/v1/namespaces/apps/configmaps/pulled"
    try:
        assert env.wait_ready("north")["reason"] == "Connected"  # its heartbeat
        assert env.cluster("north")["status"]["lastSyncerHeartbeatTime"]
        body = {"metadata": {"name": "pulled", "labels": {LABEL: "north"}}, "data": {"k": "v"}}
        env.kcp.create("/api/v1/namespaces/apps/configmaps", body)
        _copy(env, "north", pulled_path, timeout=60)
        assert env.kcp.get(pulled_path)["metadata"]["finalizers"] == ["workload.kcp.dev/syncer-north"]
        env.kcp.create(DEPLOYMENTS, deployment("pulled-web", 2, {LABEL: "north"}))
        _copy(env, "north", f"{DEPLOYMENTS}/pulled-web", timeout=60)
        play_deployment_controller(north.api, f"{DEPLOYMENTS}/pulled-web")
        wait_for(  # the status comes back to kcp
            lambda: (env.kcp.get(f"{DEPLOYMENTS}/pulled-web").get("status") or {}).get("readyReplicas") == 2,
            timeout=60,
            what=lambda: f"pulled-web's status in kcp\n{env.agent.logs()}",
        )
        env.kcp.delete(pulled_path)  # the copy goes, then the finalizer
        _gone(env, "north", pulled_path)
        wait_for(lambda: not env.kcp.exists(pulled_path), timeout=30, what="pulled released in kcp")
    finally:
        env.agent.kill("pull-syncer", signal.SIGTERM)  # the supervisor stops its roles
        with contextlib.closing(Redis.from_url(own_redis)) as pull_redis:
            forget_agent(pull_redis, env.agent_name)
    central = "".join((env.work / f"{n}.log").read_text() for n in ("worker-1", "worker-2", "worker-3"))
    assert not re.search(r"key=sync/north~configmaps/\S+/apps/pulled ", central)
    pulled = (env.work / "pull" / "worker.log").read_text()
    assert re.search(r"sync\.created key=sync/north~configmaps/\S+/apps/pulled ", pulled)
    logged = "".join(
        p.read_text(errors="replace")
        for p in [env.work / "pull-syncer.log", *(env.work / "pull").glob("*.log")]
    )
    # syncflow describes a refusal as kubectl does ("403 Forbidden: …"): the account lacked nothing
    assert not re.search(r"forbidden", logged, re.IGNORECASE), logged[-4000:]


def test_no_kubeconfig_secret_reaches_redis_or_a_log(clusters_env: ClustersEnv) -> None:
    env = clusters_env
    secrets = [SECRET, "n0rth-token", "wrong-token"]
    for key in env.redis.scan_iter(match=f"*{env.agent_name}*", count=1000):
        kind = env.redis.type(key).decode()
        if kind == "string":
            values = [env.redis.get(key)]
        elif kind == "hash":
            values = [*env.redis.hgetall(key).keys(), *env.redis.hgetall(key).values()]
        elif kind == "list":
            values = env.redis.lrange(key, 0, -1)
        elif kind in ("set", "zset"):
            values = list(env.redis.zrange(key, 0, -1) if kind == "zset" else env.redis.smembers(key))
        else:
            continue
        text = b" ".join(v for v in values if isinstance(v, bytes)).decode(errors="replace") + key.decode()
        assert not any(s in text for s in secrets), key
    assert not any(s in env.agent.logs() for s in secrets)
    for log in env.work.rglob("*.log"):
        assert not any(s in log.read_text(errors="replace") for s in secrets), log
