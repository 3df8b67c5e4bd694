"""Workload mode end to end (issue 11): objects of the SyncTarget's types run in the physical cluster,
status comes back, types start and stop as the SyncTarget and both sides' discovery change, heartbeats
count, and an unreachable physical cluster deletes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from syncflow.config import load_settings
from syncflow.modes.workload import tasks as workload_tasks  # noqa: F401  (registers the sync verbs)
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from tests.support.devcluster import Kubectl
from tests.support.kcp import bind_compute
from tests.support.waiting import wait_for
from tests.support.workload_env import HEARTBEAT_THRESHOLD, REDIS_URL, SYNC_TARGETS, WorkloadEnv

FINALIZER_PREFIX = "workload.kcp.io/syncer-"
APIS = "/apis/apis.kcp.io/v1alpha1"


def _namespace(env: WorkloadEnv, name: str) -> None:
    if not env.kcp.exists(f"/api/v1/namespaces/{name}"):
        env.kcp.create("/api/v1/namespaces", {"metadata": {"name": name}})


def _copy(env: WorkloadEnv, path: str, name: str, **kw: Any) -> dict[str, Any]:
    return wait_for(
        lambda: env.downstream(path, name),
        what=lambda: f"the downstream copy of {name}\n{env.agent.logs()}",
        **{"timeout": 30, **kw},
    )


def test_configmaps_and_secrets_go_down_into_the_mapped_namespace(workload_env: WorkloadEnv) -> None:
    env = workload_env
    _namespace(env, "apps")
    env.kcp.create(
        "/api/v1/namespaces/apps/configmaps",
        {
            "metadata": {"name": "settings", "annotations": {"kcp.io/extra": "x", "team": "a"}},
            "data": {"k": "v"},
        },
    )
    env.kcp.create(
        "/api/v1/namespaces/apps/secrets", {"metadata": {"name": "creds"}, "stringData": {"p": "s"}}
    )
    env.kcp.create(
        "/api/v1/namespaces/apps/secrets",
        {
            "metadata": {"name": "token", "annotations": {"kubernetes.io/service-account.name": "default"}},
            "type": "kubernetes.io/service-account-token",
        },
    )
    copy = _copy(env, "/api/v1/configmaps", "settings")
    assert copy["data"] == {"k": "v"}
    annotations = copy["metadata"]["annotations"]
    assert annotations["team"] == "a" and "kcp.io/extra" not in annotations
    assert annotations["syncer.kcp.io/sync-target"] == env.name
    assert annotations["syncer.kcp.io/workspace"] == "root:org:ws"
    assert "syncer.kcp.io/last-sync" in annotations
    namespace = env.physical.get(f"/api/v1/namespaces/{copy['metadata']['namespace']}")
    locator = json.loads(namespace["metadata"]["annotations"]["kcp.io/namespace-locator"])
    uid = env.sync_target()["metadata"]["uid"]
    assert locator["syncTarget"]["name"] == env.name and locator["syncTarget"]["uid"] == uid
    assert locator["namespace"] == "apps"
    assert _copy(env, "/api/v1/secrets", "creds")["metadata"]["namespace"] == copy["metadata"]["namespace"]
    upstream = env.kcp.get("/api/v1/namespaces/apps/configmaps/settings")
    assert any(f.startswith(FINALIZER_PREFIX) for f in upstream["metadata"]["finalizers"])
    assert env.downstream("/api/v1/secrets", "token") is None, "a service-account token Secret went down"
    # deletion: downstream first, then the upstream object goes
    env.kcp.delete("/api/v1/namespaces/apps/configmaps/settings")
    wait_for(
        lambda: not env.kcp.exists("/api/v1/namespaces/apps/configmaps/settings"),
        timeout=30,
        what=lambda: f"the upstream ConfigMap to go\n{env.agent.logs()}",
    )
    assert env.downstream("/api/v1/configmaps", "settings") is None


def test_deployment_runs_downstream_and_its_status_comes_back(workload_env: WorkloadEnv) -> None:
    env = workload_env
    bind_compute(env.kcp)
    _namespace(env, "web")
    env.kcp.create(
        "/apis/apps/v1/namespaces/web/deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "nginx", "labels": {"app": "nginx"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "nginx"}},
                "template": {
                    "metadata": {"labels": {"app": "nginx"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
                },
            },
        },
    )
    copy = _copy(env, "/apis/apps/v1/deployments", "nginx")
    assert copy["spec"]["replicas"] == 2
    path = f"/apis/apps/v1/namespaces/{copy['metadata']['namespace']}/deployments/nginx"

    def ready_downstream() -> bool:
        status = env.physical.get(path).get("status") or {}
        if status.get("readyReplicas") == 2:
            return True
        # no simulated controllers in this physical cluster: play its deployment controller
        env.physical.merge_patch(f"{path}/status", {"status": {"replicas": 2, "readyReplicas": 2}})
        return False

    wait_for(ready_downstream, timeout=30, what="the downstream Deployment to be ready")
    wait_for(
        lambda: (
            (env.kcp.get("/apis/apps/v1/namespaces/web/deployments/nginx").get("status") or {}).get(
                "readyReplicas"
            )
            == 2
        ),
        timeout=30,
        what=lambda: f"readyReplicas back in kcp\n{env.agent.logs()}",
    )


def _sync_queue(env: WorkloadEnv) -> QueueService:
    settings = load_settings(agent_name=env.agent_name, redis_url=REDIS_URL)
    return QueueService(env.redis, settings, lambda messages, together=False: None)


def test_physical_edits_of_kcps_fields_are_reverted_and_status_updates_write_nothing_down(
    workload_env: WorkloadEnv,
) -> None:
    """As kcp's syncer re-applies the upstream spec: replicas scaled or patched on the physical side go
    back to kcp's value, a field only the physical side sets survives, and a status update (which
    flows up) makes no write to the copy."""
    env = workload_env
    bind_compute(env.kcp)
    _namespace(env, "drift")
    env.kcp.create(
        "/apis/apps/v1/namespaces/drift/deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "keeper", "labels": {"app": "keeper"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "keeper"}},
                "template": {
                    "metadata": {"labels": {"app": "keeper"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                },
            },
        },
    )
    copy = _copy(env, "/apis/apps/v1/deployments", "keeper")
    namespace = copy["metadata"]["namespace"]
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/keeper"
    kubectl = Kubectl(env.physical_kubeconfig, env.work / "kube-cache")

    def replicas_back(what: str) -> dict[str, Any]:
        return wait_for(
            lambda: (c := env.physical.get(path))["spec"]["replicas"] == 2 and c,
            timeout=30,
            what=lambda: f"replicas back at kcp's 2 after {what}\n{env.agent.logs()}",
        )

    scaled = kubectl.run("scale", "deployment/keeper", "-n", namespace, "--replicas=5").stdout
    assert "scaled" in scaled, scaled
    replicas_back("kubectl scale")
    env.physical.merge_patch(
        path, {"metadata": {"labels": {"local": "yes"}}, "spec": {"replicas": 7, "paused": True}}
    )
    reverted = replicas_back("a patch")
    assert reverted["metadata"]["labels"]["local"] == "yes", "a label only the physical side sets was lost"
    assert reverted["spec"]["paused"] is True, "a field only the physical side sets was lost"
    upstream = env.kcp.get("/apis/apps/v1/namespaces/drift/deployments/keeper")
    assert upstream["spec"]["replicas"] == 2 and "paused" not in upstream["spec"]

    # status-only updates (the physical cluster's deployment controller's, then one of ours) flow up and
    # write nothing down: once the status is in kcp, the copy's sync key (which such an event would have
    # queued before the status key) is no longer held, and the copy is at the status write's version
    def settled() -> dict[str, Any] | None:
        live = env.physical.get(path)
        status = live.get("status") or {}
        upstream = env.kcp.get("/apis/apps/v1/namespaces/drift/deployments/keeper").get("status")
        steady = status.get("observedGeneration") == live["metadata"]["generation"]
        return live if steady and status.get("readyReplicas") == 2 and upstream == status else None

    live = wait_for(settled, timeout=30, what=lambda: f"the copy's status settled in kcp\n{env.agent.logs()}")
    probe = {"type": "Probed", "status": "True", "reason": "Test", "message": "status only"}
    conditions = [*live["status"]["conditions"], probe]
    written = env.physical.merge_patch(f"{path}/status", {"status": {"conditions": conditions}})
    wait_for(
        lambda: (
            probe
            in (env.kcp.get("/apis/apps/v1/namespaces/drift/deployments/keeper").get("status") or {}).get(
                "conditions", []
            )
        ),
        timeout=30,
        what=lambda: f"the status-only change in kcp\n{env.agent.logs()}",
    )
    cluster = copy["metadata"]["labels"]["syncagent.kcp.io/remote-object-cluster"]
    key = ObjectKey("sync", "deployments.apps", cluster, "drift", "keeper")
    queue = _sync_queue(env)
    wait_for(lambda: not queue.held([key]), timeout=30, what=f"{key} no longer held")
    after = env.physical.get(path)
    assert after["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"], after["metadata"]
    assert after["metadata"]["annotations"] == live["metadata"]["annotations"]


def test_service_ips_and_node_ports_are_left_to_the_physical_cluster(workload_env: WorkloadEnv) -> None:
    env = workload_env
    bind_compute(env.kcp)
    _namespace(env, "web")
    env.kcp.create(
        "/api/v1/namespaces/web/services",
        {
            "metadata": {"name": "front"},
            "spec": {
                "type": "NodePort",
                "clusterIP": "10.96.123.45",
                "selector": {"app": "nginx"},
                "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30123}],
            },
        },
    )
    copy = _copy(env, "/api/v1/services", "front")
    assert copy["spec"]["ports"][0]["port"] == 80
    assert copy["spec"].get("clusterIP") != "10.96.123.45"
    assert copy["spec"]["ports"][0].get("nodePort") != 30123


def test_a_type_added_to_the_synctarget_starts_syncing_without_a_restart(workload_env: WorkloadEnv) -> None:
    env = workload_env
    _namespace(env, "extra")
    env.kcp.create("/api/v1/namespaces/extra/serviceaccounts", {"metadata": {"name": "robot"}})
    target = env.sync_target()
    exports = [
        *target["spec"]["supportedAPIExports"],
        {"export": "kubernetes", "resource": "v1/serviceaccounts"},
    ]
    env.kcp.merge_patch(f"{SYNC_TARGETS}/{env.name}", {"spec": {"supportedAPIExports": exports}})
    wait_for(
        lambda: (env.synced("serviceaccounts") or {}).get("state") == "Accepted",
        timeout=30,
        what=lambda: f"serviceaccounts Accepted\n{env.agent.logs()}",
    )
    _copy(env, "/api/v1/serviceaccounts", "robot")


def test_a_type_the_physical_cluster_lacks_is_incompatible(workload_env: WorkloadEnv) -> None:
    env = workload_env
    org = env.kcp  # publish an export of a type only kcp knows, in the same workspace, and bind it there
    org.create(
        f"{APIS}/apiresourceschemas",
        {
            "metadata": {"name": "v1.gadgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {
                    "kind": "Gadget",
                    "listKind": "GadgetList",
                    "plural": "gadgets",
                    "singular": "gadget",
                },
                "scope": "Namespaced",
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    }
                ],
            },
        },
    )
    org.create(
        f"{APIS}/apiexports",
        {"metadata": {"name": "gadgets"}, "spec": {"latestResourceSchemas": ["v1.gadgets.example.com"]}},
    )
    org.create(
        f"{APIS}/apibindings",
        {
            "metadata": {"name": "gadgets"},
            "spec": {"reference": {"export": {"path": "root:org:ws", "name": "gadgets"}}},
        },
    )
    wait_for(
        lambda: env.kcp.exists("/apis/example.com/v1"), timeout=30, what="gadgets served in the workspace"
    )
    target = env.sync_target()
    exports = [*target["spec"]["supportedAPIExports"], {"export": "gadgets", "path": "root:org:ws"}]
    env.kcp.merge_patch(f"{SYNC_TARGETS}/{env.name}", {"spec": {"supportedAPIExports": exports}})
    entry = wait_for(
        lambda: (e := env.synced("gadgets", "example.com")) and e["state"] != "Pending" and e,
        timeout=30,
        what=lambda: f"gadgets checked\n{env.agent.logs()}",
    )
    assert entry["state"] == "Incompatible"
    assert "physical cluster does not serve" in entry["message"]


def test_a_workspace_crd_and_its_objects_go_down(workload_env: WorkloadEnv) -> None:
    env = workload_env
    _namespace(env, "widgets")
    env.kcp.create(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        {
            "metadata": {"name": "widgets.acme.io"},
            "spec": {
                "group": "acme.io",
                "scope": "Namespaced",
                "names": {
                    "plural": "widgets",
                    "singular": "widget",
                    "kind": "Widget",
                    "listKind": "WidgetList",
                },
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            }
                        },
                    }
                ],
            },
        },
    )
    wait_for(
        lambda: env.physical.exists(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.acme.io"
        ),
        timeout=30,
        what=lambda: f"the CRD in the physical cluster\n{env.agent.logs()}",
    )
    wait_for(
        lambda: (env.synced("widgets", "acme.io") or {}).get("state") == "Accepted",
        timeout=30,
        what=lambda: f"widgets Accepted\n{env.agent.logs()}",
    )
    env.kcp.create(
        "/apis/acme.io/v1/namespaces/widgets/widgets",
        {"apiVersion": "acme.io/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}},
    )
    assert _copy(env, "/apis/acme.io/v1/widgets", "w1")["spec"] == {"size": 3}


def test_heartbeats_count_once_per_period(workload_env: WorkloadEnv) -> None:
    env = workload_env
    first = env.sync_target()["status"]["heartbeat"]["count"]
    wait_for(
        lambda: env.sync_target()["status"]["heartbeat"]["count"] >= first + 2,
        timeout=20,
        what=lambda: f"two more heartbeats\n{env.agent.logs()}",
    )
    status = env.sync_target()["status"]
    assert status["syncerIdentifier"].startswith(f"kcp-syncer-{env.name}-")
    assert status["lastHeartbeatTime"]
    # at most one count per period (2 s): 3 beats in >= 4 s, never a burst from a doubled tick
    assert env.condition("HeartbeatReady")["status"] == "True"


def test_heartbeat_ready_turns_false_without_heartbeats_and_true_when_they_resume(
    workload_env: WorkloadEnv,
) -> None:
    env = workload_env
    env.agent.kill("beat")  # heartbeats come from beat; kcp's threshold controller notices them stop
    try:
        stale = wait_for(
            lambda: (c := env.condition("HeartbeatReady")) and c["status"] == "False" and c,
            timeout=HEARTBEAT_THRESHOLD + 20,
            what=lambda: f"HeartbeatReady=False once heartbeats stop\n{env.agent.logs()}",
        )
        assert stale["reason"] == "ErrorHeartbeat" and stale["message"].startswith("No heartbeat since ")
        ready = env.condition("Ready")
        assert ready is not None and (ready["status"], ready["reason"]) == ("False", "ErrorHeartbeat")
    finally:
        env.start_role("beat")
    wait_for(
        lambda: all((env.condition(t) or {}).get("status") == "True" for t in ("HeartbeatReady", "Ready")),
        timeout=30,
        what=lambda: f"HeartbeatReady and Ready True again\n{env.agent.logs()}",
    )


def test_unreachable_physical_cluster_deletes_nothing_and_converges_after(workload_env: WorkloadEnv) -> None:
    env = workload_env
    _namespace(env, "steady")
    env.kcp.create("/api/v1/namespaces/steady/configmaps", {"metadata": {"name": "kept"}, "data": {"v": "1"}})
    _copy(env, "/api/v1/configmaps", "kept")
    env.proxy.block()
    try:
        condition = wait_for(
            lambda: (c := env.condition("SyncerReady")) and c["status"] == "False" and c,
            timeout=30,
            what=lambda: f"SyncerReady=False\n{env.agent.logs()}",
        )
        assert condition["reason"] == "ClusterUnreachable"
        assert env.condition("Ready")["status"] == "False"
        env.kcp.merge_patch("/api/v1/namespaces/steady/configmaps/kept", {"data": {"v": "2"}})
        kept = env.kcp.get("/api/v1/namespaces/steady/configmaps/kept")
        assert any(f.startswith(FINALIZER_PREFIX) for f in kept["metadata"]["finalizers"])
        assert env.sync_target()["status"]["heartbeat"]["errors"] >= 1
    finally:
        env.proxy.unblock()
    wait_for(
        lambda: (env.condition("SyncerReady") or {}).get("status") == "True",
        timeout=30,
        what=lambda: f"SyncerReady=True again\n{env.agent.logs()}",
    )
    wait_for(
        lambda: (env.downstream("/api/v1/configmaps", "kept") or {}).get("data") == {"v": "2"},
        timeout=60,
        what=lambda: f"the change made meanwhile to arrive\n{env.agent.logs()}",
    )


def _crd(group: str, plural: str, kind: str, spec_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}},
                }
            ],
        },
    }


def test_a_physical_crd_that_takes_less_than_kcps_is_incompatible_naming_the_field(
    workload_env: WorkloadEnv,
) -> None:
    """As kcp negotiates (and clusters mode does): a narrower schema downstream would prune fields
    silently, so the type is not synced and the SyncTarget says which fields are missing."""
    env = workload_env
    both = {"type": "object", "properties": {"size": {"type": "integer"}}}
    wider = {"type": "object", "properties": {"size": {"type": "integer"}, "color": {"type": "string"}}}
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    env.physical.create(crds, _crd("narrow.io", "gizmos", "Gizmo", both))
    env.kcp.create(crds, _crd("narrow.io", "gizmos", "Gizmo", wider))
    entry = wait_for(
        lambda: (e := env.synced("gizmos", "narrow.io")) and e["state"] == "Incompatible" and e,
        timeout=30,
        what=lambda: f"gizmos Incompatible: {env.synced('gizmos', 'narrow.io')}\n{env.agent.logs()}",
    )
    assert "takes less than kcp's" in entry["message"] and "color" in entry["message"], entry
    assert not env.physical.get(f"{crds}/gizmos.narrow.io")["spec"]["versions"][0]["schema"][
        "openAPIV3Schema"
    ]["properties"]["spec"]["properties"].get("color"), "the physical cluster's own CRD was changed"


def test_a_syncer_without_the_sync_target_uid_does_not_start(workload_env: WorkloadEnv) -> None:
    """kcp's syncer requires it: a SyncTarget re-created under the same name must not be served."""
    env = workload_env
    unpinned = {k: v for k, v in env.agent.env.items() if k != "SYNCFLOW_SYNC_TARGET_UID"}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "syncflow"), "workload", "--role", "watch"],
        env=unpinned,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "workload mode needs --sync-target-uid" in result.stderr, result.stderr


def test_a_wrong_sync_target_uid_is_refused_at_start(workload_env: WorkloadEnv) -> None:
    env = workload_env
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "syncflow"),
            "workload",
            "--sync-target-uid",
            "not-the-uid",
            "--role",
            "watch",
        ],
        env=env.agent.env,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    uid = env.sync_target()["metadata"]["uid"]
    assert (
        f'SyncTarget "{env.name}" in root:org:ws has UID {uid}, not not-the-uid (--sync-target-uid)'
        in result.stderr
    )
