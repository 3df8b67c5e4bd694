"""A live stack for the sync console's browser tests and screenshots.

Real devclusters (kcp with workspace ``root:org:ws``, and a physical cluster), real Redis, one
SyncTarget whose ``syncflow workload`` roles (watch, worker, beat) sync ConfigMaps, and ``syncflow
console`` as a process of its own on a free port. Workload mode refuses a ConfigMap it did not create
sitting where a copy must go (``conflict:foreign``, docs/ownership.md), which is how the tests park an
object with a cause an operator can fix.
"""

from __future__ import annotations

import contextlib
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syncflow.config import Settings, load_settings
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.modes.workload.rules import Workspace
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Failure, WorkQueue
from syncflow.runtime.stack import free_port
from syncflow.sync.placement import locate
from syncflow.sync.rule import NamespaceMapping, Resource
from tests.support.devcluster import Kubectl
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for
from tests.support.workload_env import WorkloadEnv, WorkloadStack, workload_stack

Obj = dict[str, Any]
CONFIGMAPS = Resource(group="", version="v1", plural="configmaps", kind="ConfigMap", namespaced=True)
SETUP = 90.0
"""Seconds the agent may take to be Ready and the console to answer."""
DEADLINE = 30.0
"""Seconds syncflow may take for anything a test waits for."""
SYNC_TARGET = "east"
"""The SyncTarget the agent serves."""
HOLD = "browser.syncflow.dev/hold"
"""A finalizer nobody releases: keeps a namespace on the physical cluster Terminating while the stack
lives."""


@dataclass
class ConsoleStack:
    """The live stack: the SyncTarget's agent, its workspace identity and the console's URL."""

    stack: WorkloadStack
    env: WorkloadEnv
    workspace: Workspace
    url: str
    kubectl: Kubectl
    """kubectl against the physical cluster, as an operator fixes a cause."""
    metrics_url: str
    """The worker's /metrics, where a console reads the sync latency."""

    @property
    def rule(self) -> str:
        """The sync rule of the ConfigMaps (the rule part of their keys)."""
        return CONFIGMAPS.group_resource

    def logs(self) -> str:
        """The tail of every log of the agent and the console."""
        return self.env.agent.logs()

    # --- sources and copies ---------------------------------------------------------------------

    def create_source(self, namespace: str, name: str, data: dict[str, str]) -> Obj:
        """Create a ConfigMap in the workspace (and its namespace when missing)."""
        _ensure_namespace(self.stack.kcp, namespace)
        body = {"metadata": {"name": name, "namespace": namespace}, "data": dict(data)}
        return self.stack.kcp.create(CONFIGMAPS.path(namespace), body)

    def placed(self, namespace: str, name: str) -> tuple[str, str]:
        """Where the copy of workspace ConfigMap ``namespace/name`` lands on the physical cluster."""
        mapping = NamespaceMapping(locator=self.workspace.locator())
        obj = {"metadata": {"namespace": namespace, "name": name}}
        where = locate(mapping, obj, self.workspace.cluster, self.workspace.path, target_namespaced=True)
        return where.namespace, where.name

    def copy_of(self, namespace: str, name: str) -> Obj | None:
        """The physical cluster's object where the copy of ``namespace/name`` lands (None: none)."""
        path = CONFIGMAPS.path(*self.placed(namespace, name))
        return self.stack.physical.get(path) if self.stack.physical.exists(path) else None

    def wait_copy(self, namespace: str, name: str) -> Obj:
        """Wait until the copy of ``namespace/name`` carries the source's data."""
        source = self.stack.kcp.get(CONFIGMAPS.path(namespace, name))

        def synced() -> Obj | None:
            copy = self.copy_of(namespace, name)
            return copy if copy is not None and copy.get("data") == source.get("data") else None

        found: Obj = wait_for(
            synced, timeout=DEADLINE, what=lambda: f"the copy of {namespace}/{name}\n{self.logs()}"
        )
        return found

    def plant_foreign(self, namespace: str, name: str) -> Obj:
        """Create, by hand, a ConfigMap where the copy of ``namespace/name`` must go: syncflow did not
        make it, so it refuses to touch it."""
        target_namespace, target_name = self.placed(namespace, name)
        _ensure_namespace(self.stack.physical, target_namespace)
        body = {
            "metadata": {"name": target_name, "namespace": target_namespace},
            "data": {"owner": "made-by-hand"},
        }
        return self.stack.physical.create(CONFIGMAPS.path(target_namespace), body)

    def remove_foreign(self, namespace: str, name: str) -> None:
        """Delete the hand-made object in the way of ``namespace/name``'s copy, with kubectl."""
        target_namespace, target_name = self.placed(namespace, name)
        self.kubectl.run("delete", "configmap", target_name, "-n", target_namespace, "--wait=true")

    def block_namespace(self, namespace: str) -> None:
        """Make the physical namespace of workspace namespace ``namespace`` Terminating for as long as
        the stack lives: every create of a copy there answers 403 NamespaceTerminating, which syncflow
        retries and never parks (docs/ownership.md)."""
        target_namespace, _ = self.placed(namespace, "hold")
        _ensure_namespace(self.stack.physical, target_namespace)
        self.stack.physical.create(
            CONFIGMAPS.path(target_namespace),
            {"metadata": {"name": "hold", "namespace": target_namespace, "finalizers": [HOLD]}},
        )
        self.stack.physical.delete(f"/api/v1/namespaces/{target_namespace}")

    # --- the queue ------------------------------------------------------------------------------

    def key(self, namespace: str, name: str) -> str:
        """The sync key of workspace ConfigMap ``namespace/name``, as the console and
        ``syncflow failures`` show it."""
        return str(ObjectKey("sync", self.rule, self.workspace.cluster, namespace, name))

    def _sync_queue(self) -> WorkQueue:
        settings = _settings(self.env.agent_name)
        return QueueService(self.stack.redis, settings, lambda messages, together=False: None).queues["sync"]

    def parked(self, namespace: str, name: str) -> Failure | None:
        """The failure record of the ConfigMap's sync key while it is parked, else None."""
        queue, key = self._sync_queue(), self.key(namespace, name)
        return queue.failure(key) if queue.is_parked(key) else None

    def wait_parked(self, namespace: str, name: str) -> Failure:
        """Wait until the ConfigMap's sync key is parked; its failure record."""
        found: Failure = wait_for(
            lambda: self.parked(namespace, name),
            timeout=DEADLINE,
            what=lambda: f"{self.key(namespace, name)} to be parked\n{self.logs()}",
        )
        return found

    # --- the console ----------------------------------------------------------------------------

    def start_console(self, name: str, args: Sequence[str] = (), env: dict[str, str] | None = None) -> str:
        """Start a ``syncflow console`` process (log ``<name>.log``) with the agent's settings, on a free
        port, reading the worker's metrics, plus ``args`` and ``env``; its URL once it answers."""
        return start_console(self.env, name, ("--metrics-url", self.metrics_url, *args), env or {})


def _settings(agent_name: str) -> Settings:
    return load_settings(agent_name=agent_name, redis_url=session_redis_url())


def _ensure_namespace(api: JsonApi, name: str) -> None:
    if not api.exists(f"/api/v1/namespaces/{name}"):
        api.create("/api/v1/namespaces", {"metadata": {"name": name}})


def _start_agent(env: WorkloadEnv, metrics_port: int) -> Workspace:
    """Start the agent's roles (the worker serving /metrics on ``metrics_port``); its workspace
    identity once its SyncTarget is Ready and ConfigMaps are Accepted."""
    env.start_role("worker", "--metrics-address", f"127.0.0.1:{metrics_port}")
    env.start_role("beat")
    env.start_role("watch")
    env.wait_ready()
    wait_for(
        lambda: (env.synced(CONFIGMAPS.plural) or {}).get("state") == "Accepted",
        timeout=SETUP,
        what=lambda: f"configmaps Accepted on SyncTarget {env.name}\n{env.agent.logs()}",
    )
    cluster, path = cluster_identity(env.kcp)
    return Workspace(cluster, path, env.name, env.sync_target()["metadata"]["uid"])


def start_console(env: WorkloadEnv, name: str, args: Sequence[str], extra_env: dict[str, str]) -> str:
    """Start ``syncflow console`` with the agent's settings on a free port; its URL once it answers
    (``/healthz``, or any answer at all when that asks for credentials)."""
    port = free_port()
    agent = env.agent
    saved = agent.env
    agent.env = {**saved, "SYNCFLOW_MODE": "workload", "SYNCFLOW_REDIS_URL": session_redis_url(), **extra_env}
    try:
        process = agent.start(name, "console", "--host", "127.0.0.1", "--port", str(port), *args)
    finally:
        agent.env = saved
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"syncflow console exited ({process.returncode})\n{agent.logs()}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                return bool(response.status == 200)
        except urllib.error.HTTPError as exc:
            return exc.code in (401, 403)
        except OSError:
            return False

    wait_for(answers, timeout=SETUP, what=lambda: f"the console at {url}\n{agent.logs()}")
    return url


@contextlib.contextmanager
def console_stack(work: Path, settings: dict[str, str] | None = None) -> Iterator[ConsoleStack]:
    """The live stack, its agent with ``settings`` (``SYNCFLOW_*`` variables) added, and a console
    without auth; everything is stopped at the end."""
    with workload_stack(work) as stack:
        agent_settings = {"SYNCFLOW_WORKLOAD_RESOURCES": "[]", **(settings or {})}
        env = stack.agent(SYNC_TARGET, ["v1/configmaps"], settings=agent_settings)
        metrics_port = free_port()
        workspace = _start_agent(env, metrics_port)
        metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        url = start_console(env, "console", ("--metrics-url", metrics_url), {})
        kubectl = Kubectl(stack.physical_kubeconfig, work / "kubectl-cache")
        yield ConsoleStack(stack, env, workspace, url, kubectl, metrics_url)
