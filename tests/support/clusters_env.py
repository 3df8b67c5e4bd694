"""A clusters-mode environment: a kcp devcluster (HTTPS, an admin token) with a workspace for the
Clusters, two physical devclusters (a third one started by the tests that add it) on fixed ports so
they can be stopped and started again, real Redis, and ``syncflow clusters`` roles as an operator runs
them."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redis import Redis

from syncflow.api import cluster as cluster_api
from syncflow.api.crdgen import crd
from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.layout import forget_agent
from syncflow.runtime.stack import free_port
from tests.support.devcluster import DevclusterProcess, start_devcluster, stop_together
from tests.support.processes import REPO, SyncflowProcesses
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for

REDIS_URL = session_redis_url()
CLUSTERS = cluster_api.PATH
WORKSPACE = "root:org:clusters"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "widgets.demo.syncflow.dev"
RESOURCES = ["deployments.apps", "configmaps", WIDGETS]
PROBE_PERIOD = 2.0


def widget_crd(*fields: str) -> dict[str, Any]:
    """A namespaced Widget CRD whose spec has ``fields`` (integers)."""
    spec = {"type": "object", "properties": {f: {"type": "integer"} for f in fields}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": WIDGETS},
        "spec": {
            "group": "demo.syncflow.dev",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": spec,
                                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            },
                        }
                    },
                }
            ],
        },
    }


@dataclass
class Physical:
    """One physical cluster: a devcluster on a fixed port (restartable), its kubeconfig's text."""

    name: str
    workdir: Path
    port: int
    token: str | None = None
    process: DevclusterProcess | None = None

    def start(self) -> None:
        extra = ["--port", str(self.port)]
        self.process = start_devcluster(self.workdir, *extra, token=self.token)

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    @property
    def kubeconfig(self) -> str:
        assert self.process is not None
        return self.process.kubeconfig.read_text()

    @property
    def api(self) -> JsonApi:
        assert self.process is not None
        return JsonApi(load_client(str(self.process.kubeconfig)))


@dataclass
class ClustersEnv:
    """Clients and helpers of one clusters-mode environment."""

    kcp: JsonApi  # the workspace of the Clusters
    kcp_kubeconfig: Path
    agent: SyncflowProcesses
    agent_name: str
    redis: Redis
    work: Path
    physical: dict[str, Physical] = field(default_factory=dict)

    def add_physical(self, name: str, token: str | None = None) -> Physical:
        workdir = self.work / name
        workdir.mkdir(exist_ok=True)
        cluster = Physical(name, workdir, free_port(), token)
        cluster.start()
        self.physical[name] = cluster
        return cluster

    def register(self, name: str, kubeconfig: str | None = None, **spec: Any) -> None:
        """Create (or replace the spec of) Cluster ``name``."""
        body = {
            "kubeconfig": kubeconfig if kubeconfig is not None else self.physical[name].kubeconfig,
            **spec,
        }
        if self.kcp.exists(f"{CLUSTERS}/{name}"):
            self.kcp.merge_patch(f"{CLUSTERS}/{name}", {"spec": body})
            return
        self.kcp.create(
            CLUSTERS,
            {
                "apiVersion": "workload.kcp.dev/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": name},
                "spec": body,
            },
        )

    def cluster(self, name: str) -> dict[str, Any]:
        return self.kcp.get(f"{CLUSTERS}/{name}")

    def ready(self, name: str) -> dict[str, Any]:
        """The Cluster's Ready condition ({} before the first probe)."""
        conditions = (self.cluster(name).get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "Ready"), {})

    def synced(self, name: str, resource: str) -> dict[str, Any]:
        """The Cluster's syncedResources entry of ``<plural>.<group>`` ({} if none)."""
        plural, _, group = resource.partition(".")
        entries = (self.cluster(name).get("status") or {}).get("syncedResources") or []
        return next((e for e in entries if (e.get("group", ""), e["resource"]) == (group, plural)), {})

    def wait_ready(self, name: str, status: str = "True", timeout: float = 60) -> dict[str, Any]:
        condition: dict[str, Any] = wait_for(
            lambda: (c := self.ready(name)).get("status") == status and c,
            timeout=timeout,
            what=lambda: f"Cluster {name} Ready={status}: {self.ready(name)}\n{self.agent.logs()}",
        )
        return condition

    def start(self, workers: int = 2) -> None:
        """Start the watch, worker and beat roles."""
        common = ["clusters", "--redis-url", REDIS_URL]
        self.agent.start("worker", *common, "--role", "worker", "--workers", str(workers))
        self.agent.start("beat", *common, "--role", "beat", "--data-dir", str(self.work / "beat"))
        self.agent.start("watch", *common, "--role", "watch")


@contextlib.contextmanager
def clusters_environment(work: Path) -> Iterator[ClustersEnv]:
    """kcp + a workspace with the Cluster CRD, physical clusters east and west, and the agent's roles."""
    (work / "kcp").mkdir()
    (work / "beat").mkdir()
    kcp_dc = start_devcluster(work / "kcp", "--kcp", token=f"admin={secrets.token_hex(8)}")
    redis = Redis.from_url(REDIS_URL)
    agent_name = f"cl{uuid.uuid4().hex[:8]}"
    env: ClustersEnv | None = None
    try:
        root = JsonApi(load_client(str(kcp_dc.kubeconfig)))
        root.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "org"}})
        org = JsonApi(for_cluster(root.api, "root:org"))
        org.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "clusters"}})
        kcp = JsonApi(for_cluster(root.api, WORKSPACE))
        if not kcp.exists(CLUSTERS):
            kcp.create(CRDS, crd(cluster_api.API_TYPE))
            wait_for(lambda: kcp.exists(CLUSTERS), timeout=30, what="the Cluster CRD to be served")
        settings = {
            "PYTHONPATH": str(REPO),
            "SYNCFLOW_AGENT_NAME": agent_name,
            "SYNCFLOW_KCP_KUBECONFIG": str(kcp_dc.kubeconfig),
            "SYNCFLOW_WORKSPACE_CLUSTER": WORKSPACE,
            "SYNCFLOW_CLUSTER_RESOURCES": json.dumps(RESOURCES),
            "SYNCFLOW_PROBE_PERIOD": str(PROBE_PERIOD),
            "SYNCFLOW_RESYNC_PERIOD": "10",
            "SYNCFLOW_LEASE_DURATION": "3",
            "SYNCFLOW_RENEW_DEADLINE": "2",
            "SYNCFLOW_RETRY_PERIOD": "0.5",
            "SYNCFLOW_BACKOFF_CAP": "2",
            "SYNCFLOW_TASK_TIME_LIMIT": "20",
            "SYNCFLOW_LEASE_TTL": "30",
            "SYNCFLOW_PUMP_GRACE": "20",
        }
        agent = SyncflowProcesses({**os.environ, **settings}, work)
        env = ClustersEnv(kcp, kcp_dc.kubeconfig, agent, agent_name, redis, work)
        yield env
    finally:
        physicals = list(env.physical.values()) if env is not None else []
        if env is not None:
            env.agent.stop_all()
        stop_together(*(physical.process for physical in physicals), kcp_dc)
        forget_agent(redis, agent_name)
        redis.close()


LABEL = "workloads.kcp.dev/cluster"
SPLIT_ANNOTATION = "workloads.kcp.dev/split"


def deployment(
    name: str, replicas: int, labels: dict[str, str] | None = None, **annotations: str
) -> dict[str, Any]:
    """A Deployment of ``replicas`` nginx pods."""
    selector = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels or {}, "annotations": annotations},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": selector},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }


def play_deployment_controller(api: JsonApi, path: str) -> dict[str, Any]:
    """Report every replica of a physical cluster's Deployment ready, as its deployment controller would."""
    obj = api.get(path)
    replicas = int(obj["spec"].get("replicas", 1))
    status = {
        "observedGeneration": obj["metadata"].get("generation", 1),
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "lastUpdateTime": "2026-01-01T00:00:00Z",
            }
        ],
    }
    result: dict[str, Any] = api.merge_patch(f"{path}/status", {"status": status})
    return result
