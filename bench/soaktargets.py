"""The mode-specific half of ``bench.soak``: one ``SoakTarget`` per mode.

A target starts its mode's stack (kcp and target devclusters, the mode's config, ``watch``, ``beat`` and
one worker process; Redis is the soak's), names the source collections, builds source objects, finds a
copy's source by its sync labels and the place a source's copy lands in, and starts more workers.
Everything else (chaos, foreign objects, the convergence check) is the same for every mode.

The stacks are those of the modes' benchmarks: ``bench.e2e.Bench`` (publish), ``WorkloadBench``,
``EdgeBench`` and clusters mode's settings and Cluster of ``bench.clusters``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import quote

import aiohttp

from bench.clusters import LABEL as CLUSTER_LABEL
from bench.clusters import WORKSPACE as CLUSTERS_WORKSPACE
from bench.clusters import cluster_object, clusters_settings
from bench.e2e import GROUP, KIND, PLURAL, Api, Bench, Stack
from bench.edge import CONFIGS, MAILBOX, EdgeBench, edge_sync_config
from bench.support import (
    AgentQueue,
    agent_env,
    create_workspaces,
    logical_cluster,
    served,
    start_watch_and_beat,
    start_worker_role,
)
from bench.workload import WORKSPACE as WORKLOAD_WORKSPACE
from bench.workload import WorkloadBench
from syncflow.api import cluster as cluster_api
from syncflow.api.crdgen import crd
from syncflow.queue.keys import InvalidKeyError, ObjectKey
from syncflow.sync import metadata as md
from syncflow.sync.keys import owner_ref
from syncflow.sync.naming import NamingRule

Obj = dict[str, Any]
RUN_LABEL, RUN = "bench-run", "soak"
"""The label every source object carries (and the selector of edge mode's EdgeSyncConfig)."""
SYSTEM = "kube-system"
CLUSTER = "east"
"""Clusters mode's one Cluster."""
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@dataclass(frozen=True, order=True)
class SourceRef:
    """A source object: its kcp workspace path, namespace and name."""

    space: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.space}/{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Kind:
    """The synced type: its API path, plural, apiVersion, kind, and the field that holds its content."""

    api: str
    plural: str
    api_version: str
    kind: str
    content: str

    def collection(self, namespace: str) -> str:
        return f"{self.api}/namespaces/{namespace}/{self.plural}"

    def path(self, namespace: str, name: str) -> str:
        return f"{self.collection(namespace)}/{name}"

    def everywhere(self) -> str:
        """The path listing (or watching) every namespace's objects."""
        return f"{self.api}/{self.plural}"

    def body(self, name: str, content: dict[str, str], labels: dict[str, str], **metadata: Any) -> Obj:
        """An object of this type."""
        meta = {"name": name, "labels": labels, **metadata}
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": meta, self.content: content}


CONFIGMAPS = Kind("/api/v1", "configmaps", "v1", "ConfigMap", "data")
WIDGETS = Kind(f"/apis/{GROUP}/v1", PLURAL, f"{GROUP}/v1", KIND, "spec")
"""bench.e2e's published CRD (spec-only objects, as ConfigMaps' data)."""


def selector(labels: dict[str, str]) -> str:
    """A URL-encoded label selector requiring ``labels``."""
    return quote(",".join(f"{k}={v}" for k, v in labels.items()), safe="")


class SoakTarget(ABC):
    """One mode's stack, seen through what the soak does to it."""

    mode: ClassVar[str]
    kind: ClassVar[Kind] = CONFIGMAPS
    target_process: ClassVar[str]
    """The name of the target devcluster's process (kcp's is ``kcp``)."""
    adopts: ClassVar[bool] = False
    """The mode documents adoption of a foreign object at a copy's place (docs/ownership.md: publish)."""
    places_in_system: ClassVar[bool] = False
    """A source in kcp's ``kube-system`` would have its copy in the target's ``kube-system``."""

    def __init__(self, stack: Stack, session: aiohttp.ClientSession, redis_url: str) -> None:
        self.stack, self.session, self.redis_url = stack, session, redis_url
        self.kcp = self.target = Api(session, "")
        self.queue = AgentQueue(stack.agent, redis_url)
        self.collections: list[tuple[str, str]] = []
        """(workspace path, namespace) of each collection the sources are spread over."""
        self.spaces: dict[str, str] = {}
        """Workspace path by logical-cluster name (and by path), as sync labels and keys name them."""

    @abstractmethod
    async def start(self, collections: int) -> None:
        """Devclusters, the mode's config, ``watch``, ``beat`` and worker ``worker-1``; ``collections``
        source collections."""

    @abstractmethod
    def start_worker(self, n: int) -> str:
        """Start worker process ``n`` (one Celery process, not waited for); returns its name."""

    async def add_space(self, path: str) -> None:
        """Know workspace ``path`` by its logical-cluster name too."""
        self.spaces[path] = path
        self.spaces[await logical_cluster(self.kcp, path)] = path

    def labels(self) -> dict[str, str]:
        """The labels that make the mode sync a source object."""
        return {RUN_LABEL: RUN}

    def source_body(self, ref: SourceRef, content: dict[str, str]) -> Obj:
        return self.kind.body(ref.name, content, self.labels())

    def source_collection(self, space: str, namespace: str) -> str:
        return f"/clusters/{space}{self.kind.collection(namespace)}"

    def source_path(self, ref: SourceRef) -> str:
        return f"{self.source_collection(ref.space, ref.namespace)}/{ref.name}"

    def copy_name(self, ref: SourceRef) -> str:
        """The name of ``ref``'s copy on the target (its namespace comes from the copies seen)."""
        return ref.name

    async def sources(self) -> list[tuple[SourceRef, Obj]]:
        """Every source object of the soak in kcp."""
        found: list[tuple[SourceRef, Obj]] = []
        for space in sorted({space for space, _ in self.collections}):
            path = f"/clusters/{space}{self.kind.everywhere()}?labelSelector={selector(self.labels())}"
            _, listed = await self.kcp.call("GET", path)
            for item in listed["items"]:
                meta = item["metadata"]
                found.append((SourceRef(space, meta["namespace"], meta["name"]), item))
        return found

    def copies_path(self) -> str:
        """The target's list of this agent's copies."""
        agent = selector({md.AGENT_LABEL: self.stack.agent})
        return f"{self.kind.everywhere()}?labelSelector={agent}"

    async def copies(self) -> list[Obj]:
        """Every object on the target that carries this agent's sync labels."""
        _, listed = await self.target.call("GET", self.copies_path())
        return list(listed["items"])

    def ref_of(self, obj: Obj) -> SourceRef | None:
        """The source object of a copy, by its sync labels (None: not a copy of a known workspace's)."""
        owner = owner_ref(obj)
        if owner is None or owner.cluster not in self.spaces:
            return None
        return SourceRef(self.spaces[owner.cluster], owner.namespace, owner.name)

    def ref_of_key(self, text: str) -> SourceRef | None:
        """The source object of a queue key (None: not an object key of a known workspace)."""
        try:
            key = ObjectKey.parse(text)
        except InvalidKeyError:
            return None
        space = self.spaces.get(key.cluster)
        return SourceRef(space, key.namespace, key.name) if space else None

    def close(self) -> None:
        """Stop every process and close the queue's connection."""
        self.stack.stop_all()
        self.queue.close()


class PublishTarget(SoakTarget):
    """Publish mode (bench.e2e): Widgets in the ``default`` namespace of team workspaces binding the
    export, copies named by the PublishedResource's default naming rule."""

    mode = "publish"
    kind = WIDGETS
    target_process = "service"
    adopts = True

    async def start(self, collections: int) -> None:
        bench = Bench(self.stack, self.session, collections, self.redis_url)
        self.bench, self.queue = bench, bench.queue
        await bench.setup()
        self.kcp, self.target = bench.kcp, bench.service
        self.collections = [(team, "default") for team in bench.teams]
        for team, cluster in zip(bench.teams, bench.clusters, strict=True):
            self.spaces |= {team: team, cluster: team}
        self.names = {team: cluster for cluster, team in zip(bench.clusters, bench.teams, strict=True)}

    def start_worker(self, n: int) -> str:
        self.bench.start_worker(n, ready=False)
        return f"worker-{n}"

    def copy_name(self, ref: SourceRef) -> str:
        obj = {"metadata": {"namespace": ref.namespace, "name": ref.name}}
        return NamingRule().render(obj, self.names[ref.space], ref.space)[1]


class RoleTarget(SoakTarget):
    """A mode run as ``syncflow <mode> --role …`` processes: each worker is ``--role worker --workers 1``."""

    def start_worker(self, n: int) -> str:
        start_worker_role(self.stack, self.mode, f"worker-{n}", 1)
        return f"worker-{n}"


class WorkloadTarget(RoleTarget):
    """Workload mode (bench.workload): ConfigMaps in namespaces of one workspace with a SyncTarget,
    copies in the mapped ``kcp-<hash>`` namespaces."""

    mode = "workload"
    target_process = "physical"

    async def start(self, collections: int) -> None:
        bench = WorkloadBench(self.stack, self.session, collections, self.redis_url)
        await bench.prepare()
        self.kcp, self.target = bench.kcp, bench.physical
        self.collections = [(WORKLOAD_WORKSPACE, namespace) for namespace in bench.namespaces]
        await self.add_space(WORKLOAD_WORKSPACE)
        start_watch_and_beat(self.stack, self.mode)
        self.start_worker(1)


class EdgeTarget(RoleTarget):
    """Edge mode (bench.edge): ConfigMaps in namespaces of the mailbox workspace, downsynced by an
    EdgeSyncConfig selecting the soak's label; copies keep namespace and name."""

    mode = "edge"
    target_process = "pcluster"
    places_in_system = True

    async def start(self, collections: int) -> None:
        bench = EdgeBench(self.stack, self.session, 0, 5.0, self.redis_url)
        await bench.prepare()
        self.kcp, self.target = bench.kcp, bench.pcluster
        self.collections = [(MAILBOX, f"soak-{i}") for i in range(collections)]
        for _, namespace in self.collections:
            await self.kcp.call("POST", f"{bench.mb}/api/v1/namespaces", {"metadata": {"name": namespace}})
        await self.add_space(MAILBOX)
        start_watch_and_beat(self.stack, self.mode)
        self.start_worker(1)
        bench.wait_listed()
        config = edge_sync_config(
            RUN, "downSyncedResources", {"labelSelector": {"matchLabels": self.labels()}}
        )
        await self.kcp.call("POST", f"{bench.mb}/{CONFIGS}", config)


class ClustersTarget(RoleTarget):
    """Clusters mode (bench.clusters' settings): ConfigMaps in namespaces of one workspace, labelled for
    the one Cluster ``east``; copies keep namespace and name."""

    mode = "clusters"
    target_process = CLUSTER
    places_in_system = True

    async def start(self, collections: int) -> None:
        stack = self.stack
        self.kcp = Api(self.session, stack.devcluster("kcp", "--kcp"))
        self.target = Api(self.session, stack.devcluster(CLUSTER))
        ws = await create_workspaces(self.kcp, CLUSTERS_WORKSPACE)
        await self.kcp.call("POST", f"{ws}{CRDS}", crd(cluster_api.API_TYPE))
        await stack.wait(lambda: served(self.kcp, f"{ws}{cluster_api.PATH}"), 30, "the Cluster CRD", 0.2)
        self.collections = [(CLUSTERS_WORKSPACE, f"soak-{i}") for i in range(collections)]
        for _, namespace in self.collections:
            await self.kcp.call("POST", f"{ws}/api/v1/namespaces", {"metadata": {"name": namespace}})
        await self.add_space(CLUSTERS_WORKSPACE)
        settings = clusters_settings(stack.work / "kcp" / "kc", probe_period=10.0)
        stack.env = agent_env(stack, self.redis_url, {**settings, "SYNCFLOW_LOG_LEVEL": "INFO"})
        start_watch_and_beat(stack, self.mode)
        self.start_worker(1)
        kubeconfig = (stack.work / CLUSTER / "kc").read_text()
        await self.kcp.call("POST", f"{ws}{cluster_api.PATH}", cluster_object(CLUSTER, kubeconfig))
        await stack.wait(lambda: self._accepted(f"{ws}{cluster_api.PATH}/{CLUSTER}"), 90, "east Ready", 0.5)

    async def _accepted(self, path: str) -> bool | None:
        """True once the Cluster is Ready and takes ConfigMaps."""
        _, cluster = await self.kcp.call("GET", path)
        status = cluster.get("status") or {}
        conditions = status.get("conditions") or []
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        types = status.get("syncedResources") or []
        taken = any(t.get("resource") == "configmaps" and t.get("state") == "Accepted" for t in types)
        return True if ready and taken else None

    def labels(self) -> dict[str, str]:
        return {RUN_LABEL: RUN, CLUSTER_LABEL: CLUSTER}


TARGETS: dict[str, type[SoakTarget]] = {
    t.mode: t for t in (PublishTarget, WorkloadTarget, ClustersTarget, EdgeTarget)
}
"""The soak's modes, in the order ``--mode all`` runs them."""
