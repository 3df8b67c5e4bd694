"""A workload-mode environment: a kcp devcluster with a workspace, a physical-cluster devcluster reached
through a TCP proxy the tests can block, real Redis, and per SyncTarget in that workspace an agent whose
``syncflow workload`` roles (watch, worker, beat) run as an operator would run them."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redis import Redis

from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.layout import forget_agent
from tests.support.devcluster import kubeconfig_for, start_devcluster, stop_together
from tests.support.processes import QUICK_AGENT, REPO, SyncflowProcesses
from tests.support.proxy import TcpProxy
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for

REDIS_URL = session_redis_url()
SYNC_TARGETS = "/apis/workload.kcp.io/v1alpha1/synctargets"
WORKSPACE = "root:org:ws"
HEARTBEAT_THRESHOLD = 6.0
"""kcp's --sync-target-heartbeat-threshold here: three heartbeat periods (SYNCFLOW_HEARTBEAT_PERIOD)."""


def sync_target(name: str, resources: list[str]) -> dict[str, Any]:
    """A SyncTarget supporting ``resources`` (``<group>/<version>/<plural>``) of the kubernetes export."""
    return {
        "apiVersion": "workload.kcp.io/v1alpha1",
        "kind": "SyncTarget",
        "metadata": {"name": name},
        "spec": {
            "workloadCluster": {"name": "physical"},
            "supportedAPIExports": [{"export": "kubernetes", "resource": r} for r in resources],
        },
    }


@dataclass
class WorkloadEnv:
    """Clients and helpers of one SyncTarget and its agent."""

    kcp: JsonApi  # the SyncTarget's workspace
    physical: JsonApi
    agent: SyncflowProcesses
    agent_name: str
    name: str
    proxy: TcpProxy
    redis: Redis
    work: Path
    physical_kubeconfig: Path  # through the proxy

    def sync_target(self) -> dict[str, Any]:
        return self.kcp.get(f"{SYNC_TARGETS}/{self.name}")

    def synced(self, plural: str, group: str = "") -> dict[str, Any] | None:
        """The SyncTarget's ``status.syncedResources`` entry of a type."""
        entries = (self.sync_target().get("status") or {}).get("syncedResources") or []
        return next((e for e in entries if (e["group"], e["resource"]) == (group, plural)), None)

    def condition(self, type: str) -> dict[str, Any] | None:
        conditions = (self.sync_target().get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == type), None)

    def downstream(self, path: str, name: str) -> dict[str, Any] | None:
        """The copy of a kcp object (any mapped namespace) by collection path (``{ns}`` left out) and name."""
        items: list[dict[str, Any]] = self.physical.get(path).get("items") or []
        for item in items:
            if item["metadata"]["name"] == name and item["metadata"].get("namespace", "").startswith("kcp-"):
                return item
        return None

    def start(self, *extra: str) -> None:
        """Start the watch, worker and beat roles."""
        for role in ("worker", "beat", "watch"):
            self.start_role(role, *extra)

    def start_role(self, role: str, *extra: str) -> None:
        """Start one role (``worker``, ``beat`` or ``watch``), named after it."""
        data = ["--data-dir", str(self.work / "beat")] if role == "beat" else []
        self.agent.start(role, "workload", "--redis-url", REDIS_URL, *extra, "--role", role, *data)

    def wait_ready(self) -> None:
        """Wait until the SyncTarget is Ready (the syncer's heartbeats arrive)."""
        wait_for(
            lambda: (self.condition("Ready") or {}).get("status") == "True",
            timeout=60,
            what=lambda: f"SyncTarget {self.name} to be Ready\n{self.agent.logs()}",
        )

    def forget(self) -> None:
        """Stop the agent's processes and delete its Redis keys."""
        self.agent.stop_all()
        forget_agent(self.redis, self.agent_name)


@dataclass
class WorkloadStack:
    """kcp with the workspace ``WORKSPACE``, the physical cluster (behind ``proxy``) and Redis, shared by
    the agents of every SyncTarget made with ``agent``."""

    kcp: JsonApi  # the workspace
    kcp_kubeconfig: Path
    physical: JsonApi
    physical_kubeconfig: Path  # through the proxy
    proxy: TcpProxy
    redis: Redis
    work: Path
    agents: list[WorkloadEnv] = field(default_factory=list)

    def agent(
        self, name: str, resources: list[str] | None = None, settings: dict[str, str] | None = None
    ) -> WorkloadEnv:
        """Create SyncTarget ``name`` supporting ``resources`` and its agent's environment (not started);
        ``settings`` adds or overrides ``SYNCFLOW_*`` variables."""
        work = self.work / name
        (work / "beat").mkdir(parents=True)
        supported = ["apps/v1/deployments", "v1/services"] if resources is None else resources
        uid = self.kcp.create(SYNC_TARGETS, sync_target(name, supported))["metadata"]["uid"]
        agent_name = f"wl{uuid.uuid4().hex[:8]}"
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "SYNCFLOW_AGENT_NAME": agent_name,
            "SYNCFLOW_KCP_KUBECONFIG": str(self.kcp_kubeconfig),
            "SYNCFLOW_KUBECONFIG": str(self.physical_kubeconfig),
            "SYNCFLOW_SYNC_TARGET_NAME": name,
            "SYNCFLOW_SYNC_TARGET_UID": uid,
            "SYNCFLOW_WORKSPACE_CLUSTER": WORKSPACE,
            "SYNCFLOW_NAMESPACE": "default",
            "SYNCFLOW_HEARTBEAT_PERIOD": "2",
            "SYNCFLOW_NAMESPACE_CLEAN_DELAY": "0",
            **QUICK_AGENT,
            **(settings or {}),
        }
        made = WorkloadEnv(
            self.kcp,
            self.physical,
            SyncflowProcesses(env, work),
            agent_name,
            name,
            self.proxy,
            self.redis,
            work,
            self.physical_kubeconfig,
        )
        self.agents.append(made)
        return made

    def forget_agents(self) -> None:
        """Stop every agent made here and delete its Redis keys."""
        for agent in self.agents:
            agent.forget()


@contextlib.contextmanager
def workload_stack(work: Path) -> Iterator[WorkloadStack]:
    """kcp + the workspace, a physical cluster behind a proxy; every agent made is stopped at the end."""
    (work / "kcp").mkdir()
    (work / "physical").mkdir()
    redis = Redis.from_url(REDIS_URL)
    with contextlib.ExitStack() as cleanup:  # stops whatever was started, also when a later start fails
        cleanup.callback(redis.close)
        kcp_dc = start_devcluster(
            work / "kcp", "--kcp", "--sync-target-heartbeat-threshold", str(HEARTBEAT_THRESHOLD)
        )
        cleanup.callback(kcp_dc.stop)
        physical_dc = start_devcluster(work / "physical")
        cleanup.callback(physical_dc.stop)
        cleanup.callback(stop_together, kcp_dc, physical_dc)
        proxy = TcpProxy(physical_dc.url)
        cleanup.callback(proxy.close)
        root = JsonApi(load_client(str(kcp_dc.kubeconfig)))
        root.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "org"}})
        org = JsonApi(for_cluster(root.api, "root:org"))
        org.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "ws"}})
        stack = WorkloadStack(
            JsonApi(for_cluster(root.api, WORKSPACE)),
            kcp_dc.kubeconfig,
            JsonApi(load_client(str(physical_dc.kubeconfig))),
            kubeconfig_for(physical_dc.kubeconfig, work / "physical.kubeconfig", proxy.url),
            proxy,
            redis,
            work,
        )
        cleanup.callback(stack.forget_agents)
        yield stack


@contextlib.contextmanager
def workload_environment(
    work: Path, name: str = "east", resources: list[str] | None = None
) -> Iterator[WorkloadEnv]:
    """A workload stack with one SyncTarget and its agent's environment (not started)."""
    with workload_stack(work) as stack:
        yield stack.agent(name, resources)
