"""``syncflow demo --mode workload``: the TMC workload syncer's examples, step by step.

A kcp workspace with a SyncTarget and a physical cluster, ``syncflow workload`` (watch, worker, beat)
between them; then the seed's examples: an nginx Deployment applied in kcp runs in the physical cluster
and its ready replicas come back, a LoadBalancer Service gets its IP on the kcp Service, a ConfigMap and a
Secret go down, and the SyncTarget counts heartbeats. Where the physical devcluster runs no controllers,
the demo plays them (writes the Deployment's status, the load balancer's IP) and says so.
"""

from __future__ import annotations

import base64
from typing import Any

from syncflow.demo import kcp, launch
from syncflow.demo.play import DemoRun
from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi

Obj = dict[str, Any]
WORKSPACE = "root:org:ws"
SYNC_TARGET = "demo"
SYNC_TARGETS = "/apis/workload.kcp.io/v1alpha1/synctargets"
NAMESPACE = "syncflow"
LOGS = ("watch", "worker", "beat")
LB_IP = "203.0.113.10"
"""The address the demo gives the load balancer when no controller does (TEST-NET-3)."""


def _sync_target() -> Obj:
    return {
        "apiVersion": "workload.kcp.io/v1alpha1",
        "kind": "SyncTarget",
        "metadata": {"name": SYNC_TARGET},
        "spec": {
            "workloadCluster": {"name": "physical"},
            "supportedAPIExports": [
                {"export": "kubernetes", "resource": "apps/v1/deployments"},
                {"export": "kubernetes", "resource": "v1/services"},
            ],
        },
    }


def _nginx() -> Obj:
    labels = {"app": "nginx"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]
                },
            },
        },
    }


def _service() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {
            "type": "LoadBalancer",
            "selector": {"app": "nginx"},
            "ports": [{"port": 80, "targetPort": 80}],
        },
    }


class _Workload:
    """The running environment of the scenario."""

    def __init__(self, run: DemoRun, workspace: JsonApi, physical: JsonApi) -> None:
        self.run = run
        self.workspace = workspace
        self.physical = physical

    def status(self) -> Obj:
        return self.workspace.get(f"{SYNC_TARGETS}/{SYNC_TARGET}").get("status") or {}

    def copy(self, collection: str, name: str) -> Obj | None:
        """The physical copy of kcp object ``default/<name>`` (in its mapped ``kcp-…`` namespace)."""
        for item in self.physical.get(collection).get("items") or []:
            meta = item["metadata"]
            if meta["name"] == name and meta.get("namespace", "").startswith("kcp-"):
                return dict(item)
        return None

    def wait_copy(self, collection: str, name: str, what: str) -> Obj:
        return self.run.wait(lambda: self.copy(collection, name), f"{what} in the physical cluster", LOGS)


def scenario(run: DemoRun) -> list[str]:
    """Start kcp, the physical cluster and the syncer; play the seed's examples; return the hints."""
    progress, stack = run.progress, run.stack
    kcp_dc, physical_dc, root = kcp.start_clusters(run, "physical", "physical-cluster")
    workspace = kcp.create_workspaces(root, WORKSPACE)
    kcp.bind(run, workspace, "root:compute", "kubernetes", "/apis/apps/v1")
    progress.done(
        f"kcp: workspace {WORKSPACE} binds root:compute's kubernetes export (Deployments, Services)"
    )
    uid = workspace.create(SYNC_TARGETS, _sync_target())["metadata"]["uid"]
    progress.done(f"SyncTarget {SYNC_TARGET} created: supportedAPIExports apps/v1/deployments, v1/services")
    physical = JsonApi(load_client(str(physical_dc.kubeconfig)))
    physical.create("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    workspace_kubeconfig = launch.workspace_kubeconfig(
        kcp_dc.kubeconfig, stack.workdir / "kcp-ws.kubeconfig", f"{kcp_dc.url}/clusters/{WORKSPACE}"
    )
    launch.start_roles(
        stack,
        "workload",
        {
            "SYNCFLOW_REDIS_URL": run.redis_url,
            "SYNCFLOW_AGENT_NAME": run.agent,
            "SYNCFLOW_KCP_KUBECONFIG": str(kcp_dc.kubeconfig),
            "SYNCFLOW_KUBECONFIG": str(physical_dc.kubeconfig),
            "SYNCFLOW_SYNC_TARGET_NAME": SYNC_TARGET,
            "SYNCFLOW_SYNC_TARGET_UID": uid,
            "SYNCFLOW_WORKSPACE_CLUSTER": WORKSPACE,
            "SYNCFLOW_NAMESPACE": NAMESPACE,
            "SYNCFLOW_HEARTBEAT_PERIOD": "5",
            "SYNCFLOW_BACKOFF_CAP": "2",
        },
        run.metrics,
    )
    progress.done("syncflow workload running: watch, worker and beat")
    env = _Workload(run, workspace, physical)
    _play(env)
    return _hints(workspace_kubeconfig, physical_dc.kubeconfig)


def _dig(obj: Obj, path: str) -> Any:
    """The value at dotted ``path`` in ``obj`` (None where any step is missing)."""
    value: Any = obj
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _ready(status: Obj) -> Obj | None:
    conditions = status.get("conditions") or []
    return status if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions) else None


def _play(env: _Workload) -> None:
    status = env.run.wait(lambda: _ready(env.status()), f"SyncTarget {SYNC_TARGET} Ready", LOGS)
    accepted = [r["resource"] for r in status.get("syncedResources") or [] if r.get("state") == "Accepted"]
    count = _dig(status, "heartbeat.count")
    env.run.progress.done(
        f"SyncTarget {SYNC_TARGET} Ready (heartbeat #{count}); Accepted: {', '.join(accepted)}"
    )
    namespace = _deployment(env)
    _load_balancer(env)
    _config(env, namespace)
    _heartbeats(env)


def _deployment(env: _Workload) -> str:
    """nginx: applied in kcp, running downstream, its ready replicas back; returns its namespace there."""
    run = env.run
    env.workspace.create("/apis/apps/v1/namespaces/default/deployments", _nginx())
    copy = env.wait_copy("/apis/apps/v1/deployments", "nginx", "the nginx Deployment")
    namespace = str(copy["metadata"]["namespace"])
    run.progress.done(
        f"Deployment default/nginx applied in kcp → running in the physical cluster: {namespace}/nginx"
    )
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/nginx"
    ready = {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1}
    _, played = run.observed_or_played(
        lambda: _dig(env.physical.get(path), "status.readyReplicas"),
        lambda: env.physical.merge_patch(f"{path}/status", {"status": ready}),
        "the nginx Deployment's ready replicas in the physical cluster",
        LOGS,
    )
    upstream = "/apis/apps/v1/namespaces/default/deployments/nginx"
    replicas = run.wait(
        lambda: _dig(env.workspace.get(upstream), "status.readyReplicas"), "the ready replicas in kcp", LOGS
    )
    by = " (written by the demo, as kube's controllers would: this devcluster runs none)" if played else ""
    run.progress.done(f"ready replicas back on the kcp Deployment: {replicas}/1{by}")
    return namespace


def _load_balancer(env: _Workload) -> None:
    """A LoadBalancer Service: its address, given in the physical cluster, appears on the kcp Service."""
    run = env.run
    env.workspace.create("/api/v1/namespaces/default/services", _service())
    service = env.wait_copy("/api/v1/services", "web", "the web Service")
    path = f"/api/v1/namespaces/{service['metadata']['namespace']}/services/web"
    _, played = run.observed_or_played(
        lambda: _dig(env.physical.get(path), "status.loadBalancer.ingress"),
        lambda: env.physical.merge_patch(
            f"{path}/status", {"status": {"loadBalancer": {"ingress": [{"ip": LB_IP}]}}}
        ),
        "the load balancer's address in the physical cluster",
        LOGS,
    )
    ingress = run.wait(
        lambda: _dig(
            env.workspace.get("/api/v1/namespaces/default/services/web"), "status.loadBalancer.ingress"
        ),
        "the load balancer's address on the kcp Service",
        LOGS,
    )
    address = ingress[0].get("ip") or ingress[0].get("hostname")
    by = " (the demo played the load balancer)" if played else ""
    run.progress.done(f"Service default/web (LoadBalancer) → address {address} on the kcp Service{by}")


def _config(env: _Workload, namespace: str) -> None:
    """A ConfigMap and a Secret go down into the mapped namespace."""
    env.workspace.create(
        "/api/v1/namespaces/default/configmaps",
        {"metadata": {"name": "settings"}, "data": {"greeting": "hello"}},
    )
    env.workspace.create(
        "/api/v1/namespaces/default/secrets",
        {"metadata": {"name": "credentials"}, "data": {"password": base64.b64encode(b"s3cret").decode()}},
    )
    env.wait_copy("/api/v1/configmaps", "settings", "the ConfigMap")
    env.wait_copy("/api/v1/secrets", "credentials", "the Secret")
    env.run.progress.done(f"ConfigMap default/settings and Secret default/credentials → {namespace}")


def _heartbeats(env: _Workload) -> None:
    """The heartbeat count moves on."""
    before = _dig(env.status(), "heartbeat.count") or 0

    def next_beat() -> Obj | None:
        status = env.status()
        return status if (_dig(status, "heartbeat.count") or 0) > before else None

    status = env.run.wait(next_beat, "the next heartbeat", LOGS)
    env.run.progress.done(
        f"heartbeats on the SyncTarget: #{before} → #{_dig(status, 'heartbeat.count')} "
        f"(lastHeartbeatTime {status.get('lastHeartbeatTime')})"
    )


def _hints(workspace_kubeconfig: object, physical_kubeconfig: object) -> list[str]:
    kubectl = launch.kubectl_command()
    return [
        "",
        "kubeconfigs:",
        f"  kcp workspace {WORKSPACE}:    {workspace_kubeconfig}",
        f"  physical cluster:           {physical_kubeconfig}",
        "try:",
        f"  {kubectl} --kubeconfig {workspace_kubeconfig} get synctargets {SYNC_TARGET} -o yaml",
        f"  {kubectl} --kubeconfig {workspace_kubeconfig} get deployments,services,configmaps",
        f"  {kubectl} --kubeconfig {physical_kubeconfig} get deployments,services -A",
        f"  {kubectl} --kubeconfig {workspace_kubeconfig} scale deployment nginx --replicas 3",
        "stop with Ctrl-C",
    ]
