"""A publish-mode environment: a service-cluster devcluster, a kcp devcluster, real Redis, and real
``syncflow worker``, ``beat`` and ``watch`` processes configured like an operator would; and
``Published``, one published CRD type with its kcp and local paths."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.layout import forget_agent
from syncflow.runtime.stack import free_port
from syncflow.sync.naming import sha1_hex
from tests.support.devcluster import DevclusterProcess, kubeconfig_for, start_devcluster, stop_together
from tests.support.processes import QUICK_AGENT, REPO, SyncflowProcesses
from tests.support.proxy import TcpProxy
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for

APIS = "/apis/apis.kcp.io/v1alpha1"
PUBLISHED = "/apis/syncagent.kcp.io/v1alpha1/publishedresources"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
EXPORT = "services"
CLEANUP = "syncagent.kcp.io/cleanup"
"""The finalizer publish mode holds on kcp objects while they are synced."""


class Agent(SyncflowProcesses):
    """One syncflow deployment (its processes) against the environment's clusters."""

    def watcher(self, name: str, *extra: str) -> int:
        """Start a ``syncflow watch`` replica; returns its health port."""
        port = free_port()
        self.start(name, "watch", "--health-address", f"127.0.0.1:{port}", *extra)
        return port


@dataclass
class PublishEnv:
    """Clients and helpers for the publish tests."""

    service: JsonApi
    kcp_org: JsonApi
    kcp_root: JsonApi
    kcp_base: str
    agent: Agent
    agent_name: str
    redis: Redis
    proxy: TcpProxy | None = None
    metrics_ports: dict[str, int] = field(default_factory=dict)
    """With ``metrics``: the /metrics port of each process (watch-a, worker, beat)."""

    def workspace(self, path: str) -> JsonApi:
        return JsonApi(for_cluster(self.kcp_root.api, path))

    def published(self, name: str) -> dict[str, Any]:
        return self.service.get(f"{PUBLISHED}/{name}")

    def ready_schema(self, name: str, timeout: float = 30) -> str:
        """Wait until the PublishedResource is Ready and return its schema name."""

        def check() -> str | None:
            status = self.published(name).get("status") or {}
            ready = any(
                c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
            )
            return status.get("resourceSchemaName") if ready else None

        return str(
            wait_for(
                check,
                timeout=timeout,
                what=lambda: f"PublishedResource {name} to be Ready\n{self.agent.logs()}",
            )
        )

    def condition(self, name: str) -> dict[str, Any] | None:
        conditions = (self.published(name).get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c.get("type") == "Ready"), None)

    def parked(self, key: str) -> dict[str, Any] | None:
        """The parked failure of ``key`` as ``syncflow failures list --json`` shows it, if any."""
        out = subprocess.run(
            [str(Path(sys.executable).parent / "syncflow"), "failures", "list", "--json"],
            env=self.agent.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        return next((f for f in json.loads(out) if f["key"] == key), None)

    def export(self) -> dict[str, Any]:
        return self.kcp_org.get(f"{APIS}/apiexports/{EXPORT}")

    def schema(self, name: str) -> dict[str, Any]:
        return self.kcp_org.get(f"{APIS}/apiresourceschemas/{name}")

    def apply(self, api: JsonApi, collection: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Create, or replace what exists (like kubectl apply for whole objects)."""
        try:
            return api.create(collection, obj)
        except ApiException as exc:
            if exc.status != 409:
                raise
        current = api.get(f"{collection}/{obj['metadata']['name']}")
        return api.replace(
            f"{collection}/{obj['metadata']['name']}",
            {
                **obj,
                "metadata": {**obj["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]},
            },
        )


def crd(
    group: str,
    kind: str,
    plural: str,
    versions: tuple[str, ...] = ("v1",),
    extra: dict[str, Any] | None = None,
    scope: str = "Namespaced",
) -> dict[str, Any]:
    """A CRD with an open schema per version (the first version stores)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "shortNames": [kind.lower()[:3]],
                "categories": ["demo"],
            },
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": i == 0,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                    **(extra or {}),
                                },
                                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            },
                        }
                    },
                }
                for i, v in enumerate(versions)
            ],
        },
    }


def published(name: str, group: str, kind: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "syncagent.kcp.io/v1alpha1",
        "kind": "PublishedResource",
        "metadata": {"name": name},
        "spec": {"resource": {"apiGroup": group, "kind": kind}, **spec},
    }


def _ws(api: JsonApi, name: str) -> None:
    api.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": name}})


@contextlib.contextmanager
def publish_environment(
    work: Path,
    *,
    kcp_through_proxy: bool = False,
    settings: dict[str, str] | None = None,
    metrics: bool = False,
    all_in_one: bool = False,
) -> Iterator[PublishEnv]:
    """Everything of a publish-mode deployment; with ``kcp_through_proxy`` syncflow reaches kcp
    (and its virtual workspace) only through a TCP proxy the test can block; with ``metrics`` every
    process serves /metrics; with ``all_in_one`` one ``syncflow publish`` runs every role."""
    (work / "service").mkdir()
    (work / "kcp").mkdir()
    proxy: TcpProxy | None = None
    kcp_args = ["--kcp"]
    if kcp_through_proxy:
        port = free_port()
        proxy = TcpProxy(f"http://127.0.0.1:{port}")
        kcp_args += ["--port", str(port), "--external-url", proxy.url]
    agent_name = f"pub{uuid.uuid4().hex[:8]}"
    with contextlib.ExitStack() as cleanup:  # stops whatever was started, also when a later start fails
        if proxy is not None:
            cleanup.callback(proxy.close)
        service_dc = start_devcluster(work / "service")
        cleanup.callback(service_dc.stop)
        kcp_dc = start_devcluster(work / "kcp", *kcp_args)
        cleanup.callback(kcp_dc.stop)
        cleanup.callback(stop_together, service_dc, kcp_dc)
        redis = Redis.from_url(session_redis_url())
        cleanup.callback(redis.close)
        cleanup.callback(forget_agent, redis, agent_name)
        agent = Agent({}, work)
        cleanup.callback(agent.stop_all)
        env = _prepare(service_dc, kcp_dc, agent, agent_name, redis, proxy, settings or {})
        if all_in_one:
            agent.start("publish", "publish", "--workers", "2", "--data-dir", str(work / "all-in-one"))
        else:
            _start_roles(env, metrics)
        yield env


def _prepare(
    service_dc: DevclusterProcess,
    kcp_dc: DevclusterProcess,
    agent: Agent,
    agent_name: str,
    redis: Redis,
    proxy: TcpProxy | None,
    settings: dict[str, str],
) -> PublishEnv:
    kcp_root = JsonApi(load_client(str(kcp_dc.kubeconfig)))
    kcp_base = kcp_dc.url
    _ws(kcp_root, "org")
    org = JsonApi(for_cluster(kcp_root.api, "root:org"))
    org.create(f"{APIS}/apiexports", {"metadata": {"name": EXPORT}, "spec": {}})
    for team in ("team-1", "team-2"):
        _ws(org, team)
        JsonApi(for_cluster(kcp_root.api, f"root:org:{team}")).create(
            f"{APIS}/apibindings",
            {
                "metadata": {"name": EXPORT},
                "spec": {
                    "reference": {"export": {"path": "root:org", "name": EXPORT}},
                    "permissionClaims": [
                        {"group": "", "resource": "events", "all": True, "state": "Accepted"},
                        {"group": "", "resource": "namespaces", "all": True, "state": "Accepted"},
                        {
                            "group": "core.kcp.io",
                            "resource": "logicalclusters",
                            "all": True,
                            "state": "Accepted",
                        },
                    ],
                },
            },
        )
    agent_kcp = proxy.url if proxy is not None else kcp_base
    kcp_kubeconfig = kubeconfig_for(
        kcp_dc.kubeconfig, agent.log_dir / "kcp-org.kubeconfig", f"{agent_kcp}/clusters/root:org"
    )
    service = JsonApi(load_client(str(service_dc.kubeconfig)))
    subprocess.run(
        [
            str(Path(sys.executable).parent / "syncflow"),
            "crds",
            "--apply",
            "--kubeconfig",
            str(service_dc.kubeconfig),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    service.create("/api/v1/namespaces", {"metadata": {"name": "syncflow"}})
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "SYNCFLOW_REDIS_URL": session_redis_url(),
        "SYNCFLOW_AGENT_NAME": agent_name,
        "SYNCFLOW_KUBECONFIG": str(service_dc.kubeconfig),
        "SYNCFLOW_KCP_KUBECONFIG": str(kcp_kubeconfig),
        "SYNCFLOW_APIEXPORTENDPOINTSLICE_REF": EXPORT,
        "SYNCFLOW_NAMESPACE": "syncflow",
        **QUICK_AGENT,
        **settings,
    }
    agent.env = env
    return PublishEnv(service, org, kcp_root, kcp_base, agent, agent_name, redis, proxy, {})


def _start_roles(env: PublishEnv, metrics: bool) -> None:
    """The watcher, a worker and beat as separate processes (with ``metrics``, each serving /metrics)."""
    agent, agent_name = env.agent, env.agent_name
    ports = {name: free_port() for name in ("worker", "beat", "watch-a")} if metrics else {}
    env.metrics_ports.update(ports)

    def flags(name: str) -> list[str]:
        return ["--metrics-address", f"127.0.0.1:{ports[name]}"] if metrics else []

    agent.start(
        "worker",
        "worker",
        "-c",
        "2",
        "-n",
        f"worker-{agent_name}@%h",
        "-I",
        "syncflow.modes.publish.tasks",
        *flags("worker"),
    )
    agent.start("beat", "beat", "-s", str(agent.log_dir / "beat-schedule"), *flags("beat"))
    agent.watcher("watch-a", *flags("watch-a"))


def readyz(port: int) -> tuple[int, dict[str, Any]]:
    """GET /readyz of a watcher: (status code, body)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    except OSError:
        return 0, {}


class Published:
    """One published resource: its kcp path per workspace and its local path."""

    def __init__(self, env: PublishEnv, name: str, group: str, plural: str, kind: str, **spec: Any) -> None:
        self.env, self.name, self.group, self.plural, self.kind = env, name, group, plural, kind
        env.apply(env.service, CRDS, crd(group, kind, plural, extra=spec.pop("crd_extra", None)))
        env.apply(env.service, PUBLISHED, published(name, group, kind, **spec))
        env.ready_schema(name)
        for team in ("team-1", "team-2"):
            self._wait_served(team)

    def _wait_served(self, team: str) -> None:
        api = self.env.workspace(f"root:org:{team}")
        wait_for(
            lambda: ok(api, self.kcp_path()),
            timeout=30,
            what=lambda: f"{self.plural}.{self.group} served in {team}\n{self.env.agent.logs()}",
        )

    def kcp_path(self, namespace: str = "default", name: str = "") -> str:
        return f"/apis/{self.group}/v1/namespaces/{namespace}/{self.plural}" + (f"/{name}" if name else "")

    def local_list(self) -> list[dict[str, Any]]:
        return self.env.service.get(f"/apis/{self.group}/v1/{self.plural}").get("items") or []

    def create(
        self,
        team: str,
        name: str,
        spec: dict[str, Any],
        labels: dict[str, str] | None = None,
        namespace: str = "default",
    ) -> dict[str, Any]:
        api = self.env.workspace(f"root:org:{team}")
        if namespace != "default" and not ok(api, f"/api/v1/namespaces/{namespace}"):
            api.create("/api/v1/namespaces", {"metadata": {"name": namespace, "labels": labels or {}}})
        body = {
            "apiVersion": f"{self.group}/v1",
            "kind": self.kind,
            "metadata": {"name": name, "labels": labels or {}},
            "spec": spec,
        }
        return api.create(self.kcp_path(namespace), body)

    def copy_of(self, cluster: str, name: str, namespace: str = "default") -> dict[str, Any] | None:
        for item in self.local_list():
            labels = item["metadata"].get("labels") or {}
            if (
                labels.get("syncagent.kcp.io/remote-object-cluster") == cluster
                and labels.get("syncagent.kcp.io/remote-object-name-hash") == sha1_hex(name)
                and labels.get("syncagent.kcp.io/remote-object-namespace-hash") == sha1_hex(namespace)
            ):
                return item
        return None

    def wait_copy(
        self, cluster: str, name: str, check: Any = None, namespace: str = "default", timeout: float = 30
    ) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            copy = self.copy_of(cluster, name, namespace)
            return copy if copy is not None and (check is None or check(copy)) else None

        copy: dict[str, Any] = wait_for(
            found,
            timeout=timeout,
            what=lambda: f"the local copy of {cluster}/{namespace}/{name}\n{self.env.agent.logs()}",
        )
        return copy


def ok(api: JsonApi, path: str) -> bool:
    """Whether a GET of ``path`` answers (any error: no)."""
    try:
        api.get(path)
    except Exception:
        return False
    return True


def cluster_of(env: PublishEnv, team: str) -> str:
    """The logical cluster name of workspace ``root:org:<team>``."""
    lc = env.workspace(f"root:org:{team}").get("/apis/core.kcp.io/v1alpha1/logicalclusters/cluster")
    return str(lc["metadata"]["annotations"]["kcp.io/cluster"])
