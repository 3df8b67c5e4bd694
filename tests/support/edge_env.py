"""An edge-mode environment: a kcp devcluster with a mailbox workspace (EdgeSyncConfig CRD installed), a
p-cluster devcluster reached through a TCP proxy the tests can block, real Redis, and ``syncflow edge``
roles (watch, worker, beat) as an operator would run them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.layout import forget_agent
from tests.support.devcluster import DevclusterProcess, kubeconfig_for, start_devcluster, stop_together
from tests.support.processes import QUICK_AGENT, REPO, SyncflowProcesses
from tests.support.proxy import TcpProxy
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for

REDIS_URL = session_redis_url()
CONFIGS = "/apis/edge.kcp.io/v1alpha1/edgesyncconfigs"
MAILBOX = "root:edge:mb1"


@dataclass
class EdgeEnv:
    """Clients and helpers of one edge-mode environment."""

    kcp: JsonApi  # the mailbox workspace
    root: JsonApi
    pcluster: JsonApi
    agent: SyncflowProcesses
    agent_name: str
    proxy: TcpProxy
    work: Path
    kcp_url: str
    redis: Redis

    def config(self, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        """Create or replace an EdgeSyncConfig."""
        body: dict[str, Any] = {
            "apiVersion": "edge.kcp.io/v1alpha1",
            "kind": "EdgeSyncConfig",
            "metadata": {"name": name},
            "spec": spec,
        }
        try:
            return self.kcp.create(CONFIGS, body)
        except ApiException as exc:
            if exc.status != 409:
                raise
        current = self.kcp.get(f"{CONFIGS}/{name}")
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        return self.kcp.replace(f"{CONFIGS}/{name}", body)

    def namespace(self, name: str, api: JsonApi | None = None) -> None:
        api = api or self.kcp
        if not api.exists(f"/api/v1/namespaces/{name}"):
            api.create("/api/v1/namespaces", {"metadata": {"name": name}})

    def start(self, *extra: str) -> None:
        """Start the watch, worker and beat roles."""
        common = ["edge", "--redis-url", REDIS_URL, "--data-dir", str(self.work / "agent"), *extra]
        self.agent.start("worker", *common, "--role", "worker")
        self.agent.start("beat", *common, "--role", "beat")
        self.agent.start("watch", *common, "--role", "watch")

    def wait_listening(self) -> None:
        """Wait until the watcher has listed the EdgeSyncConfigs (it serves them from then on)."""
        wait_for(
            lambda: "watch.listed watch=kcp:edgesyncconfigs" in self.agent.logs(),
            timeout=60,
            what=lambda: f"the edge watcher to list the EdgeSyncConfigs\n{self.agent.logs()}",
        )


@contextlib.contextmanager
def edge_environment(work: Path) -> Iterator[EdgeEnv]:
    """kcp + a mailbox workspace, a p-cluster behind a proxy, and the agent's environment (not started)."""
    for directory in ("kcp", "pcluster", "agent"):
        (work / directory).mkdir()
    kcp_dc = start_devcluster(work / "kcp", "--kcp")
    pcluster_dc: DevclusterProcess | None = None
    proxy: TcpProxy | None = None
    agent: SyncflowProcesses | None = None
    redis = Redis.from_url(REDIS_URL)
    agent_name = f"edge{uuid.uuid4().hex[:8]}"
    try:
        pcluster_dc = start_devcluster(work / "pcluster")
        proxy = TcpProxy(pcluster_dc.url)
        root = JsonApi(load_client(str(kcp_dc.kubeconfig)))
        root.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "edge"}})
        JsonApi(for_cluster(root.api, "root:edge")).create(
            "/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "mb1"}}
        )
        mailbox_kubeconfig = kubeconfig_for(
            kcp_dc.kubeconfig, work / "mailbox.kubeconfig", f"{kcp_dc.url}/clusters/{MAILBOX}"
        )
        subprocess.run(
            [
                str(Path(sys.executable).parent / "syncflow"),
                "crds",
                "--apply",
                "--mode",
                "edge",
                "--kubeconfig",
                str(mailbox_kubeconfig),
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "SYNCFLOW_AGENT_NAME": agent_name,
            "SYNCFLOW_KCP_KUBECONFIG": str(kcp_dc.kubeconfig),
            "SYNCFLOW_KUBECONFIG": str(
                kubeconfig_for(pcluster_dc.kubeconfig, work / "pcluster.kubeconfig", proxy.url)
            ),
            "SYNCFLOW_WORKSPACE_CLUSTER": MAILBOX,
            "SYNCFLOW_NAMESPACE": "default",
            "SYNCFLOW_UPSYNC_PERIOD": "1",
            "SYNCFLOW_STATUS_PERIOD": "2",
            **QUICK_AGENT,
        }
        agent = SyncflowProcesses(env, work)
        kcp = JsonApi(for_cluster(root.api, MAILBOX))
        pcluster = JsonApi(load_client(str(pcluster_dc.kubeconfig)))
        yield EdgeEnv(kcp, root, pcluster, agent, agent_name, proxy, work, kcp_dc.url, redis)
    finally:
        if agent is not None:
            agent.stop_all()
        forget_agent(redis, agent_name)
        redis.close()
        if proxy is not None:
            proxy.close()
        stop_together(pcluster_dc, kcp_dc)
