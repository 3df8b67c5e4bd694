"""Issue 10 item 7: simulated controllers — the node, Deployments, ReplicaSets, StatefulSets,
DaemonSets and Jobs run their pods, which become Running/Ready, and their status follows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.support.devcluster import DevclusterProcess, Kubectl, simulated_devcluster
from tests.support.waiting import wait_for
from tests.support.workloads import pod_template, status_field, workload

NODE = "devcluster-node"


@pytest.fixture(scope="module")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """This module's devcluster runs the simulated controllers (conftest's does not)."""
    yield from simulated_devcluster(tmp_path_factory.mktemp("simulated"))


def _pods(core: client.CoreV1Api, namespace: str, app: str) -> list[client.V1Pod]:
    return core.list_namespaced_pod(namespace, label_selector=f"app={app}").items


def _condition(conditions: list[Any] | None, kind: str) -> Any:
    return next((c for c in conditions or [] if c.type == kind), None)


def test_there_is_one_ready_node(api_client: client.ApiClient) -> None:
    nodes = client.CoreV1Api(api_client).list_node().items
    assert [n.metadata.name for n in nodes] == [NODE]
    ready = _condition(nodes[0].status.conditions, "Ready")
    assert (ready.status, ready.reason) == ("True", "KubeletReady")
    assert nodes[0].metadata.labels["kubernetes.io/hostname"] == NODE
    assert nodes[0].status.allocatable["pods"] == "110"


def test_deployment_runs_ready_pods_through_a_replicaset(
    api_client: client.ApiClient, namespace: str
) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    created = apps.create_namespaced_deployment(namespace, workload("Deployment", "web"))
    done = wait_for(
        lambda: (
            status_field((d := apps.read_namespaced_deployment("web", namespace)), "available_replicas") == 3
            and d
        ),
        what="3 available replicas",
    )
    assert (done.status.replicas, done.status.ready_replicas, done.status.updated_replicas) == (3, 3, 3)
    assert done.status.observed_generation == done.metadata.generation
    available = _condition(done.status.conditions, "Available")
    progressing = _condition(done.status.conditions, "Progressing")
    assert (available.status, available.reason) == ("True", "MinimumReplicasAvailable")
    assert (progressing.status, progressing.reason) == ("True", "NewReplicaSetAvailable")
    [rs] = apps.list_namespaced_replica_set(namespace).items
    pod_hash = rs.metadata.labels["pod-template-hash"]
    assert rs.metadata.name == f"web-{pod_hash}"
    [owner] = rs.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid, owner.controller) == (
        "Deployment",
        "web",
        created.metadata.uid,
        True,
    )
    assert rs.spec.selector.match_labels == {"app": "web", "pod-template-hash": pod_hash}
    assert rs.status.ready_replicas == 3
    pods = _pods(core, namespace, "web")
    assert len(pods) == 3
    for pod in pods:
        assert pod.metadata.owner_references[0].uid == rs.metadata.uid
        assert pod.metadata.labels["pod-template-hash"] == pod_hash
        assert pod.spec.node_name == NODE and pod.status.phase == "Running"
        assert pod.status.pod_ip and pod.status.start_time is not None
        assert _condition(pod.status.conditions, "Ready").status == "True"
        [container] = pod.status.container_statuses
        assert container.ready and container.state.running is not None and container.image == "nginx:1.27"
    assert len({p.status.pod_ip for p in pods}) == 3


def test_deployment_scales(api_client: client.ApiClient, kubectl: Kubectl, namespace: str) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_deployment(namespace, workload("Deployment", "sc", replicas=1))
    wait_for(
        lambda: status_field(apps.read_namespaced_deployment("sc", namespace), "ready_replicas") == 1,
        what="1 ready",
    )
    kubectl.run("scale", "deployment/sc", "--replicas=4", "-n", namespace)
    wait_for(
        lambda: status_field(apps.read_namespaced_deployment("sc", namespace), "ready_replicas") == 4,
        what="4 ready",
    )
    assert len(_pods(core, namespace, "sc")) == 4
    kubectl.run("scale", "deployment/sc", "--replicas=2", "-n", namespace)
    wait_for(lambda: len(_pods(core, namespace, "sc")) == 2, what="2 pods left")
    wait_for(
        lambda: status_field(apps.read_namespaced_deployment("sc", namespace), "replicas") == 2,
        what="status 2",
    )


def test_template_change_rolls_out_a_new_replicaset(
    api_client: client.ApiClient, kubectl: Kubectl, namespace: str
) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_deployment(namespace, workload("Deployment", "roll", replicas=2))
    wait_for(
        lambda: status_field(apps.read_namespaced_deployment("roll", namespace), "ready_replicas") == 2,
        what="ready",
    )
    [first] = apps.list_namespaced_replica_set(namespace).items
    kubectl.run("set", "image", "deployment/roll", "main=nginx:1.28", "-n", namespace)

    def rolled_out() -> bool:
        d = apps.read_namespaced_deployment("roll", namespace)
        progressing = _condition(d.status.conditions, "Progressing")
        return (
            status_field(d, "observed_generation") == 2
            and d.status.updated_replicas == 2
            and d.status.replicas == 2
            and progressing.reason == "NewReplicaSetAvailable"
        )

    wait_for(rolled_out, what="the rollout to finish")
    sets = {rs.metadata.name: rs for rs in apps.list_namespaced_replica_set(namespace).items}
    assert len(sets) == 2 and sets[first.metadata.name].spec.replicas == 0
    [new] = [rs for name, rs in sets.items() if name != first.metadata.name]
    assert new.metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    wait_for(lambda: len(_pods(core, namespace, "roll")) == 2, what="the old pods gone")
    images = {p.spec.containers[0].image for p in _pods(core, namespace, "roll")}
    assert images == {"nginx:1.28"}


def test_statefulset_pods_are_ordinal(api_client: client.ApiClient, namespace: str) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_stateful_set(namespace, workload("StatefulSet", "db", serviceName="db"))
    sts = wait_for(
        lambda: (
            status_field((s := apps.read_namespaced_stateful_set("db", namespace)), "ready_replicas") == 3
            and s
        ),
        what="3 ready StatefulSet replicas",
    )
    assert sts.status.current_revision == sts.status.update_revision
    assert (sts.status.replicas, sts.status.updated_replicas) == (3, 3)
    assert sts.status.observed_generation == 1
    pods = sorted(_pods(core, namespace, "db"), key=lambda p: p.metadata.name)
    assert [p.metadata.name for p in pods] == ["db-0", "db-1", "db-2"]
    assert [p.metadata.labels["apps.kubernetes.io/pod-index"] for p in pods] == ["0", "1", "2"]
    assert all(p.spec.hostname == p.metadata.name and p.spec.subdomain == "db" for p in pods)
    apps.patch_namespaced_stateful_set_scale("db", namespace, {"spec": {"replicas": 1}})
    wait_for(
        lambda: [p.metadata.name for p in _pods(core, namespace, "db")] == ["db-0"], what="only db-0 left"
    )
    wait_for(
        lambda: status_field(apps.read_namespaced_stateful_set("db", namespace), "replicas") == 1,
        what="status 1",
    )


def test_daemonset_runs_one_pod_on_the_node(api_client: client.ApiClient, namespace: str) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_daemon_set(namespace, workload("DaemonSet", "agent", replicas=None))
    ds = wait_for(
        lambda: (
            status_field((d := apps.read_namespaced_daemon_set("agent", namespace)), "number_ready") == 1
            and d
        ),
        what="the DaemonSet's pod ready",
    )
    assert (ds.status.desired_number_scheduled, ds.status.current_number_scheduled) == (1, 1)
    assert ds.status.number_available == 1 and ds.status.observed_generation == 1
    [pod] = _pods(core, namespace, "agent")
    assert pod.spec.node_name == NODE and pod.metadata.owner_references[0].kind == "DaemonSet"
    apps.create_namespaced_daemon_set(
        namespace,
        workload(
            "DaemonSet",
            "nowhere",
            replicas=None,
            template=pod_template("nowhere", nodeSelector={"disk": "ssd"}),
        ),
    )
    none = wait_for(
        lambda: (
            (d := apps.read_namespaced_daemon_set("nowhere", namespace)).status is not None
            and d.status.observed_generation == 1
            and d
        ),
        what="the unschedulable DaemonSet's status",
    )
    assert none.status.desired_number_scheduled == 0 and not _pods(core, namespace, "nowhere")


def test_job_pods_succeed_and_the_job_completes(api_client: client.ApiClient, namespace: str) -> None:
    batch, core = client.BatchV1Api(api_client), client.CoreV1Api(api_client)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "once"},
        "spec": {"completions": 2, "parallelism": 1, "template": pod_template("once", restart="Never")},
    }
    batch.create_namespaced_job(namespace, job)
    done = wait_for(
        lambda: (
            status_field((j := batch.read_namespaced_job("once", namespace)), "completion_time") is not None
            and j
        ),
        what="the Job to complete",
    )
    assert done.status.succeeded == 2 and not done.status.active and done.status.start_time is not None
    complete = _condition(done.status.conditions, "Complete")
    assert (complete.status, complete.reason) == ("True", "CompletionsReached")
    pods = _pods(core, namespace, "once")
    assert len(pods) == 2 and {p.status.phase for p in pods} == {"Succeeded"}
    assert all(p.metadata.labels["batch.kubernetes.io/job-name"] == "once" for p in pods)
    terminated = pods[0].status.container_statuses[0].state.terminated
    assert (terminated.exit_code, terminated.reason) == (0, "Completed")


def test_kubectl_rollout_status_and_wait(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "deployment", "kc", "--image=nginx:1.27", "--replicas=2", "-n", namespace)
    rollout = kubectl.run("rollout", "status", "deployment/kc", "-n", namespace, "--timeout=20s")
    assert 'deployment "kc" successfully rolled out' in rollout.stdout
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "kc-job"},
        "spec": {"template": pod_template("kc-job", restart="Never")},
    }
    kubectl.run("apply", "-n", namespace, "-f", "-", stdin=json.dumps(job))
    waited = kubectl.run("wait", "--for=condition=Complete", "job/kc-job", "-n", namespace, "--timeout=20s")
    assert "condition met" in waited.stdout
    nodes = kubectl.json("get", "nodes")
    assert [n["metadata"]["name"] for n in nodes["items"]] == [NODE]


def test_recreate_strategy_replaces_all_pods(
    api_client: client.ApiClient, kubectl: Kubectl, namespace: str
) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_deployment(
        namespace, workload("Deployment", "re", replicas=2, strategy={"type": "Recreate"})
    )
    wait_for(
        lambda: status_field(apps.read_namespaced_deployment("re", namespace), "ready_replicas") == 2,
        what="ready",
    )
    kubectl.run("set", "image", "deployment/re", "main=nginx:1.28", "-n", namespace)
    kubectl.run("rollout", "status", "deployment/re", "-n", namespace, "--timeout=20s")
    pods = _pods(core, namespace, "re")
    assert len(pods) == 2 and {p.spec.containers[0].image for p in pods} == {"nginx:1.28"}
    assert sorted(rs.spec.replicas for rs in apps.list_namespaced_replica_set(namespace).items) == [0, 2]


def test_statefulset_template_change_replaces_pods(api_client: client.ApiClient, namespace: str) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_stateful_set(
        namespace, workload("StatefulSet", "kv", replicas=2, serviceName="kv")
    )
    before = wait_for(
        lambda: (
            status_field(s := apps.read_namespaced_stateful_set("kv", namespace), "ready_replicas") == 2 and s
        ),
        what="2 ready",
    )
    apps.patch_namespaced_stateful_set(
        "kv", namespace, {"spec": {"template": {"metadata": {"annotations": {"rev": "2"}}}}}
    )

    def updated() -> Any:
        s = apps.read_namespaced_stateful_set("kv", namespace)
        done = (
            status_field(s, "observed_generation") == 2
            and status_field(s, "updated_replicas") == 2
            and status_field(s, "ready_replicas") == 2
            and s.status.current_revision == s.status.update_revision
        )
        return done and s

    after = wait_for(updated, what="the StatefulSet rolled to its new template")
    assert after.status.update_revision != before.status.update_revision
    pods = _pods(core, namespace, "kv")
    assert sorted(p.metadata.name for p in pods) == ["kv-0", "kv-1"]
    assert {p.metadata.annotations.get("rev") for p in pods} == {"2"}
    assert {p.metadata.labels["controller-revision-hash"] for p in pods} == {after.status.update_revision}


def test_a_bare_pod_is_scheduled_and_runs(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    spec = pod_template("bare", readinessGates=[{"conditionType": "example.com/warm"}])["spec"]
    spec["initContainers"] = [{"name": "setup", "image": "busybox"}]
    core.create_namespaced_pod(namespace, {"metadata": {"name": "bare"}, "spec": spec})
    pod = wait_for(
        lambda: status_field(p := core.read_namespaced_pod("bare", namespace), "phase") == "Running" and p,
        what="the pod running",
    )
    assert pod.spec.node_name == NODE and pod.status.host_ip and pod.status.pod_ip
    conditions = {c.type: c.status for c in pod.status.conditions}
    assert conditions == dict.fromkeys(
        (
            "PodReadyToStartContainers",
            "Initialized",
            "ContainersReady",
            "Ready",
            "PodScheduled",
            "example.com/warm",
        ),
        "True",
    )
    [init] = pod.status.init_container_statuses
    assert init.name == "setup" and init.state.terminated.reason == "Completed"


def test_daemonset_template_change_replaces_its_pod(api_client: client.ApiClient, namespace: str) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_daemon_set(namespace, workload("DaemonSet", "logs", replicas=None))
    wait_for(
        lambda: status_field(apps.read_namespaced_daemon_set("logs", namespace), "number_ready") == 1,
        what="ready",
    )
    [first] = _pods(core, namespace, "logs")
    apps.patch_namespaced_daemon_set(
        "logs",
        namespace,
        {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.28"}]}}}},
    )

    def replaced() -> Any:
        ds = apps.read_namespaced_daemon_set("logs", namespace)
        pods = _pods(core, namespace, "logs")
        done = (
            status_field(ds, "observed_generation") == 2
            and status_field(ds, "updated_number_scheduled") == 1
            and status_field(ds, "number_ready") == 1
            and len(pods) == 1
        )
        return done and pods[0]

    pod = wait_for(replaced, what="the DaemonSet's pod replaced")
    assert pod.metadata.uid != first.metadata.uid and pod.spec.containers[0].image == "nginx:1.28"
