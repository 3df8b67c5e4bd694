"""A workload-mode environment: a kcp devcluster with a workspace holding a SyncTarget, a physical-cluster
devcluster reached through a TCP proxy the tests can block, real Redis, and ``syncflow workload`` roles
(watch, worker, beat) as an operator would run them."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from redis import Redis

from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from tests.support.devcluster import DevclusterProcess, start_devcluster
from tests.support.processes import REPO, SyncflowProcesses
from tests.support.proxy import TcpProxy
from tests.support.waiting import wait_for

REDIS_URL = os.environ.get("SYNCFLOW_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
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


def _kubeconfig_for(source: Path, target: Path, server: str) -> Path:
    config = yaml.safe_load(source.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = server
    target.write_text(yaml.safe_dump(config))
    return target


@dataclass
class WorkloadEnv:
    """Clients and helpers of one workload-mode environment."""

    kcp: JsonApi  # the SyncTarget's workspace
    physical: JsonApi
    agent: SyncflowProcesses
    agent_name: str
    name: str
    proxy: TcpProxy
    redis: Redis
    work: Path

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
        for item in self.physical.get(path).get("items") or []:
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


@contextlib.contextmanager
def workload_environment(
    work: Path, name: str = "east", resources: list[str] | None = None
) -> Iterator[WorkloadEnv]:
    """kcp + a workspace with a SyncTarget, a physical cluster behind a proxy, and the agent's roles."""
    (work / "kcp").mkdir()
    (work / "physical").mkdir()
    (work / "beat").mkdir()
    kcp_dc = start_devcluster(
        work / "kcp", "--kcp", "--sync-target-heartbeat-threshold", str(HEARTBEAT_THRESHOLD)
    )
    physical_dc: DevclusterProcess | None = None
    proxy: TcpProxy | None = None
    agent: SyncflowProcesses | None = None
    redis = Redis.from_url(REDIS_URL)
    agent_name = f"wl{uuid.uuid4().hex[:8]}"
    try:
        physical_dc = start_devcluster(work / "physical")
        proxy = TcpProxy(physical_dc.url)
        root = JsonApi(load_client(str(kcp_dc.kubeconfig)))
        root.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "org"}})
        org = JsonApi(for_cluster(root.api, "root:org"))
        org.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "ws"}})
        kcp = JsonApi(for_cluster(root.api, WORKSPACE))
        kcp.create(SYNC_TARGETS, sync_target(name, resources or ["apps/v1/deployments", "v1/services"]))
        physical_kubeconfig = _kubeconfig_for(physical_dc.kubeconfig, work / "physical.kubeconfig", proxy.url)
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "SYNCFLOW_AGENT_NAME": agent_name,
            "SYNCFLOW_KCP_KUBECONFIG": str(kcp_dc.kubeconfig),
            "SYNCFLOW_KUBECONFIG": str(physical_kubeconfig),
            "SYNCFLOW_SYNC_TARGET_NAME": name,
            "SYNCFLOW_WORKSPACE_CLUSTER": WORKSPACE,
            "SYNCFLOW_NAMESPACE": "default",
            "SYNCFLOW_HEARTBEAT_PERIOD": "2",
            "SYNCFLOW_NAMESPACE_CLEAN_DELAY": "0",
            "SYNCFLOW_LEASE_DURATION": "3",
            "SYNCFLOW_RENEW_DEADLINE": "2",
            "SYNCFLOW_RETRY_PERIOD": "0.5",
            "SYNCFLOW_BACKOFF_CAP": "2",
            "SYNCFLOW_TASK_TIME_LIMIT": "10",
            "SYNCFLOW_LEASE_TTL": "15",
            "SYNCFLOW_PUMP_GRACE": "10",
        }
        agent = SyncflowProcesses(env, work)
        yield WorkloadEnv(
            kcp,
            JsonApi(load_client(str(physical_dc.kubeconfig))),
            agent,
            agent_name,
            name,
            proxy,
            redis,
            work,
        )
    finally:
        if agent is not None:
            agent.stop_all()
        for pattern in (f"sf:{agent_name}:*", f"sf:{{{agent_name}:*"):
            keys = list(redis.scan_iter(match=pattern, count=1000))
            if keys:
                redis.delete(*keys)
        redis.close()
        if proxy is not None:
            proxy.close()
        if physical_dc is not None:
            physical_dc.stop()
        kcp_dc.stop()


@pytest.fixture(scope="module")
def workload_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkloadEnv]:
    with workload_environment(tmp_path_factory.mktemp("workload")) as env:
        env.start()
        wait_for(
            lambda: (env.condition("Ready") or {}).get("status") == "True",
            timeout=60,
            what=lambda: f"the SyncTarget to be Ready\n{env.agent.logs()}",
        )
        yield env
