"""A bootstrap environment: kcp and a physical cluster as devclusters serving HTTPS with an admin token
(kubectl sends bearer tokens only over TLS, and ServiceAccount tokens are what is tested), real Redis,
the real kubectl, and syncflow run as the generated manifests say (there is no container runtime here:
the Deployments' processes run as local processes, with the manifests' arguments)."""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow.kube import kubeconfigs
from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.layout import forget_agent
from tests.support.devcluster import VENV_BIN, DevclusterProcess, Kubectl, start_devcluster, stop_together
from tests.support.processes import QUICK_AGENT, REPO, SyncflowProcesses

REDIS_URL = os.environ.get("SYNCFLOW_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
WORKSPACES = "/apis/tenancy.kcp.io/v1alpha1/workspaces"
FAST = {
    "SYNCFLOW_HEARTBEAT_PERIOD": "2",
    "SYNCFLOW_UPSYNC_PERIOD": "1",
    "SYNCFLOW_STATUS_PERIOD": "2",
    "SYNCFLOW_NAMESPACE_CLEAN_DELAY": "0",
    **QUICK_AGENT,
}
"""Periods short enough for a test (an operator would keep the defaults)."""

Obj = dict[str, Any]


def by_kind(objects: list[Obj]) -> dict[tuple[str, str], Obj]:
    """Objects of a manifest by (kind, name)."""
    return {(o["kind"], o["metadata"]["name"]): o for o in objects}


def status_of(call: Any) -> int:
    """The HTTP status of an API call: 200 when it succeeds, else the error's."""
    try:
        call()
    except ApiException as exc:
        return int(exc.status)
    return 200


@dataclass
class Installed:
    """A manifest applied to the physical cluster, with the syncer's credentials on both sides."""

    objects: list[Obj]
    namespace: str
    name: str
    kcp_kubeconfig: Path
    """The kubeconfig from the manifest's Secret (the syncer's token in its workspace)."""
    cluster_kubeconfig: Path
    """A kubeconfig of the physical cluster holding a token of the manifest's ServiceAccount."""

    def args(self, deployment: str, data_dir: Path) -> list[str]:
        """The container arguments of ``deployment``, with the pod's paths replaced by local ones."""
        container = by_kind(self.objects)[("Deployment", deployment)]["spec"]["template"]["spec"][
            "containers"
        ][0]
        replaced = {"/kcp/kubeconfig": str(self.kcp_kubeconfig), "/var/lib/syncflow/agent": str(data_dir)}
        args = [replaced.get(arg, arg) for arg in container["args"]]
        if "--health-address" in args:  # the pod's 0.0.0.0:8080 may be taken here
            del args[args.index("--health-address") : args.index("--health-address") + 2]
        return [*args, "--cluster-kubeconfig", str(self.cluster_kubeconfig)]

    def env(self, deployment: str) -> dict[str, str]:
        """The container's environment as the pod would see it (namespace, Redis) plus short periods."""
        container = by_kind(self.objects)[("Deployment", deployment)]["spec"]["template"]["spec"][
            "containers"
        ][0]
        env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
        env.update({"SYNCFLOW_NAMESPACE": self.namespace, "SYNCFLOW_REDIS_URL": REDIS_URL, **FAST})
        return env


@dataclass
class BootstrapEnv:
    """kcp (root and helpers), the physical cluster, kubectl on both, and syncflow processes."""

    work: Path
    kcp_dc: DevclusterProcess
    cluster_dc: DevclusterProcess
    root: JsonApi
    cluster: JsonApi
    cluster_kubectl: Kubectl
    processes: list[SyncflowProcesses] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)

    def workspace(self, path: str) -> JsonApi:
        """An admin client of one workspace."""
        return JsonApi(for_cluster(self.root.api, path))

    def create_workspace(self, path: str) -> JsonApi:
        """Create ``path`` (e.g. ``root:org:ws``) and its parents as needed."""
        parent = "root"
        for name in path.split(":")[1:]:
            current = f"{parent}:{name}"
            try:
                self.workspace(parent).create(WORKSPACES, {"metadata": {"name": name}})
            except ApiException as exc:
                if exc.status != 409:
                    raise
            parent = current
        return self.workspace(path)

    def syncflow(
        self, *args: str, check: bool = True, as_kubectl: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run ``syncflow <args>`` as an operator with the kcp admin kubeconfig (``as_kubectl``: given
        as kubectl takes it, ``$KUBECONFIG``, not syncflow's variable)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCFLOW_") and k != "KUBECONFIG"}
        env["KUBECONFIG" if as_kubectl else "SYNCFLOW_KCP_KUBECONFIG"] = str(self.kcp_dc.kubeconfig)
        result = subprocess.run(
            [str(VENV_BIN / "syncflow"), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        if check and result.returncode != 0:
            pytest.fail(f"syncflow {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return result

    def install(self, manifest: Path) -> Installed:
        """Apply ``manifest`` as an operator would (server-side dry run first), and read the syncer's
        credentials back: the kcp kubeconfig from its Secret, a token of its ServiceAccount."""
        objects = list(yaml.safe_load_all(manifest.read_text()))
        namespace = objects[0]["metadata"]["name"]
        self.cluster_kubectl.run("create", "namespace", namespace)  # a dry run cannot create it first
        dry = self.cluster_kubectl.run("apply", "--dry-run=server", "-f", str(manifest))
        assert "(server dry run)" in dry.stdout
        assert self.cluster.get(f"/apis/apps/v1/namespaces/{namespace}/deployments")["items"] == []
        self.cluster_kubectl.run("apply", "-f", str(manifest))
        again = self.cluster_kubectl.run("apply", "-f", str(manifest)).stdout.splitlines()
        assert [line for line in again if not line.endswith(" unchanged")] == [], again
        name = next(o["metadata"]["name"] for o in objects if o["kind"] == "ServiceAccount")
        secret = self.cluster.get(f"/api/v1/namespaces/{namespace}/secrets/{name}")
        kcp_kubeconfig = self.work / f"{name}-kcp.kubeconfig"
        kcp_kubeconfig.write_bytes(base64.b64decode(secret["data"]["kubeconfig"]))
        token = self.cluster.create(
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 3600},
            },
        )["status"]["token"]
        config = yaml.safe_load(self.cluster_dc.kubeconfig.read_text())
        for user in config["users"]:
            user["user"] = {"token": token}
        cluster_kubeconfig = self.work / f"{name}-cluster.kubeconfig"
        cluster_kubeconfig.write_text(kubeconfigs.dump(config))
        return Installed(objects, namespace, name, kcp_kubeconfig, cluster_kubeconfig)

    def run(self, installed: Installed, deployment: str) -> SyncflowProcesses:
        """Run the process of ``deployment`` locally, as its pod would."""
        env = installed.env(deployment)
        self.agents.append(env["SYNCFLOW_AGENT_NAME"])
        processes = SyncflowProcesses({**os.environ, "PYTHONPATH": str(REPO), **env}, self.work)
        self.processes.append(processes)
        data_dir = self.work / f"{deployment}-data"
        data_dir.mkdir(exist_ok=True)
        processes.start(deployment, *installed.args(deployment, data_dir))
        return processes


@pytest.fixture
def bootstrap_env(tmp_path: Path) -> Iterator[BootstrapEnv]:
    (tmp_path / "kcp").mkdir()
    (tmp_path / "cluster").mkdir()
    kcp_dc = start_devcluster(tmp_path / "kcp", "--kcp", token=f"admin={secrets.token_hex(8)}")
    cluster_dc: DevclusterProcess | None = None
    env: BootstrapEnv | None = None
    try:
        cluster_dc = start_devcluster(tmp_path / "cluster", token=f"admin={secrets.token_hex(8)}")
        cluster = JsonApi(load_client(str(cluster_dc.kubeconfig)))
        env = BootstrapEnv(
            tmp_path,
            kcp_dc,
            cluster_dc,
            JsonApi(load_client(str(kcp_dc.kubeconfig))),
            cluster,
            Kubectl(cluster_dc.kubeconfig, tmp_path / "kubectl-cache"),
        )
        yield env
    finally:
        if env is not None:
            for processes in env.processes:
                processes.stop_all()
            redis = Redis.from_url(REDIS_URL)
            for agent in env.agents:
                forget_agent(redis, agent)
            redis.close()
        stop_together(cluster_dc, kcp_dc)


def unique(prefix: str) -> str:
    """A name no other test uses."""
    return f"{prefix}{uuid.uuid4().hex[:6]}"
