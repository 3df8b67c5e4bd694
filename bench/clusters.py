"""Clusters-mode benchmark: kcp, three physical devclusters, real Redis, real ``syncflow clusters`` roles.

1. Cluster create → first synced object: a ConfigMap labelled for a cluster waits in kcp; the
   Cluster is created and the time until the copy exists in that cluster is taken (each of the three
   clusters in turn).
2. Rebalance after a cluster goes away: a 6-replica Deployment split 2+2+2; one cluster's API server is
   stopped; the times until its Cluster is NotReady and until the two others hold 3+3 (in kcp and in
   the clusters) are taken, with the probe period they depend on.
3. Objects/s syncing to three clusters: N ConfigMaps labelled round-robin, created by 8 clients, with 1
   and then 3 worker processes (``--workers 1`` each), until every copy exists in its cluster. The
   baseline is this process doing the two minimal calls (kcp create, cluster create) per object with
   8 clients; the ratio syncflow/baseline is printed with the load average.

Run: ``.venv/bin/python bench/clusters.py`` (Redis at 127.0.0.1:6379; the agent's keys are removed).
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)  # run as a script: bench/queue.py would shadow the stdlib queue module

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from redis import Redis

from syncflow.api import cluster as cluster_api
from syncflow.api.crdgen import crd
from syncflow.demo import launch
from syncflow.demo.stack import Stack
from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.layout import forget_agent

REDIS_URL = "redis://127.0.0.1:6379/0"
WORKSPACE = "root:org:bench"
LABEL = "workloads.kcp.dev/cluster"
CLUSTERS = ("east", "north", "west")
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
T = TypeVar("T")


def clusters_settings(kcp_kubeconfig: Path, probe_period: float) -> dict[str, str]:
    """The ``SYNCFLOW_*`` settings of clusters mode over ``WORKSPACE`` (ConfigMaps and Deployments),
    besides Redis and the agent name."""
    return {
        "SYNCFLOW_MODE": "clusters",
        "SYNCFLOW_KCP_KUBECONFIG": str(kcp_kubeconfig),
        "SYNCFLOW_WORKSPACE_CLUSTER": WORKSPACE,
        "SYNCFLOW_CLUSTER_RESOURCES": json.dumps(["deployments.apps", "configmaps"]),
        "SYNCFLOW_PROBE_PERIOD": str(probe_period),
        "SYNCFLOW_LOG_LEVEL": "WARNING",
    }


def cluster_object(name: str, kubeconfig: str) -> dict[str, Any]:
    """The Cluster ``name`` registering the cluster of ``kubeconfig`` (its text)."""
    return {"kind": "Cluster", "metadata": {"name": name}, "spec": {"kubeconfig": kubeconfig}}


def wait(check: Callable[[], T | bool | None], timeout: float, what: str) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.01)


class Bench:
    """The running stack and its clients."""

    def __init__(self, work: Path, probe_period: float) -> None:
        self.stack = Stack(work)
        self.agent = f"bench{uuid.uuid4().hex[:8]}"
        self.probe_period = probe_period
        kcp = launch.start_devcluster(self.stack, "kcp", kcp=True)
        self.physical = {n: launch.start_devcluster(self.stack, n, kcp=False) for n in CLUSTERS}
        self.clusters = {n: JsonApi(load_client(str(d.kubeconfig))) for n, d in self.physical.items()}
        root = JsonApi(load_client(str(kcp.kubeconfig)))
        root.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "org"}})
        org = JsonApi(for_cluster(root.api, "root:org"))
        org.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "bench"}})
        self.kcp = JsonApi(for_cluster(root.api, WORKSPACE))
        if not self.kcp.exists(cluster_api.PATH):
            self.kcp.create(CRDS, crd(cluster_api.API_TYPE))
            wait(lambda: self.kcp.exists(cluster_api.PATH), 30, "the Cluster CRD")
        self.env = launch.child_env(
            {
                "SYNCFLOW_REDIS_URL": REDIS_URL,
                "SYNCFLOW_AGENT_NAME": self.agent,
                **clusters_settings(kcp.kubeconfig, probe_period),
            }
        )
        command = launch.syncflow_command()
        self.stack.start("beat", [*command, "clusters", "--role", "beat", "--data-dir", str(work)], self.env)
        self.stack.start("watch", [*command, "clusters", "--role", "watch"], self.env)
        self.workers = 0
        self.add_workers(1)
        for namespace in ("first", "one", "three", "base", "split"):  # kcp namespaces of the runs
            self.kcp.create("/api/v1/namespaces", {"metadata": {"name": namespace}})

    def add_workers(self, total: int) -> None:
        """Run ``total`` worker processes (``--workers 1`` each)."""
        command = launch.syncflow_command()
        while self.workers < total:
            self.workers += 1
            name = f"worker-{self.workers}"
            self.stack.start(name, [*command, "clusters", "--role", "worker", "--workers", "1"], self.env)
            self.stack.wait(lambda n=name: " ready." in self.stack.log_text(n), 60, name, [name])  # type: ignore[misc]

    def register(self, name: str) -> None:
        self.kcp.create(cluster_api.PATH, cluster_object(name, self.physical[name].kubeconfig.read_text()))

    def ready(self, name: str) -> str:
        conditions = (self.kcp.get(f"{cluster_api.PATH}/{name}").get("status") or {}).get("conditions") or []
        return next((c["status"] for c in conditions if c["type"] == "Ready"), "")

    def first_object(self, name: str) -> float:
        """Seconds from creating Cluster ``name`` to the copy of an object waiting for it."""
        body = {"metadata": {"name": f"for-{name}", "labels": {LABEL: name}}, "data": {"k": "v"}}
        self.kcp.create("/api/v1/namespaces/first/configmaps", body)
        started = time.perf_counter()
        self.register(name)
        path = f"/api/v1/namespaces/first/configmaps/for-{name}"
        wait(lambda: self.clusters[name].exists(path), 120, f"the first object in {name}")
        return time.perf_counter() - started

    def shares(self) -> dict[str, int]:
        out = {}
        for name in CLUSTERS:
            path = f"/apis/apps/v1/namespaces/split/deployments/web--{name}"
            if self.kcp.exists(path):
                out[name] = int(self.kcp.get(path)["spec"]["replicas"])
        return out

    def in_clusters(self, names: tuple[str, ...]) -> dict[str, int]:
        out = {}
        for name in names:
            path = f"/apis/apps/v1/namespaces/split/deployments/web--{name}"
            if self.clusters[name].exists(path):
                out[name] = int(self.clusters[name].get(path)["spec"]["replicas"])
        return out

    def rebalance(self) -> dict[str, float]:
        """Seconds from stopping west until (each first seen) its Cluster is NotReady, kcp's shards are
        3+3 on east and north, and those clusters run 3+3."""
        selector = {"app": "web"}
        spec = {
            "replicas": 6,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": selector},
                "spec": {"containers": [{"name": "w", "image": "x"}]},
            },
        }
        self.kcp.create(
            "/apis/apps/v1/namespaces/split/deployments", {"metadata": {"name": "web"}, "spec": spec}
        )
        wait(lambda: self.shares() == {"east": 2, "north": 2, "west": 2}, 60, "the 2+2+2 split")
        started = time.perf_counter()
        self.stack.stop_child("west")
        checks: dict[str, Callable[[], bool]] = {
            "not_ready": lambda: self.ready("west") == "False",
            "kcp": lambda: self.shares() == {"east": 3, "north": 3, "west": 0},
            "clusters": lambda: self.in_clusters(("east", "north")) == {"east": 3, "north": 3},
        }
        seen: dict[str, float] = {}
        deadline = time.monotonic() + 120
        while len(seen) < len(checks) and time.monotonic() < deadline:
            for name, check in checks.items():
                if name not in seen and check():
                    seen[name] = time.perf_counter() - started
            time.sleep(0.01)
        if len(seen) < len(checks):
            raise SystemExit(f"the rebalance did not finish: {seen}")
        return seen

    def create_all(self, namespace: str, count: int, direct: bool = False) -> float:
        """Create ``count`` ConfigMaps labelled round-robin with 8 clients and return the seconds until
        every copy exists in its cluster. ``direct`` is the baseline: unlabelled in kcp (syncflow leaves
        them alone) and each copy created by this process."""
        names = [(f"cm-{i:05d}", CLUSTERS[i % len(CLUSTERS)]) for i in range(count)]
        if direct:
            for cluster in self.clusters.values():
                cluster.create("/api/v1/namespaces", {"metadata": {"name": namespace}})

        def one(item: tuple[str, str]) -> None:
            name, cluster = item
            labels = {} if direct else {LABEL: cluster}
            body = {"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}
            self.kcp.create(f"/api/v1/namespaces/{namespace}/configmaps", body)
            if direct:
                self.clusters[cluster].create(f"/api/v1/namespaces/{namespace}/configmaps", body)

        started = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(one, names))

        def done() -> bool:
            for cluster in CLUSTERS:
                listed = self.clusters[cluster].get(f"/api/v1/namespaces/{namespace}/configmaps")
                have = sum(1 for i in listed.get("items") or [] if i["metadata"]["name"].startswith("cm-"))
                if have < sum(1 for _, c in names if c == cluster):
                    return False
            return True

        wait(done, 600, f"every copy of {namespace}")
        return time.perf_counter() - started

    def cpu(self) -> dict[str, float]:
        """CPU seconds used so far by each child and its descendants (from /proc)."""
        stats = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                stats[int(entry.name)] = (
                    int(fields[1]),
                    (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"),
                )
        used = {}
        for child in self.stack.children:
            tree, total = {child.process.pid}, 0.0
            for pid, (parent, _) in sorted(stats.items()):
                if parent in tree:
                    tree.add(pid)
            total = sum(stats[pid][1] for pid in tree if pid in stats)
            used[child.name] = round(total, 1)
        return used

    def close(self) -> None:
        self.stack.stop()
        redis = Redis.from_url(REDIS_URL)
        forget_agent(redis, self.agent)
        redis.close()


def main(objects: int, probe_period: float) -> None:
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-clusters-") as work:
        bench = Bench(Path(work), probe_period)
        try:
            firsts = [bench.first_object(name) for name in CLUSTERS]
            # throughput while all three clusters are up, then the rebalance (it stops west)
            before = bench.cpu()
            one = objects / bench.create_all("one", objects)
            cpu_one = {k: round(v - before.get(k, 0), 1) for k, v in bench.cpu().items()}
            bench.add_workers(3)
            before = bench.cpu()
            three = objects / bench.create_all("three", objects)
            cpu_three = {k: round(v - before.get(k, 0), 1) for k, v in bench.cpu().items()}
            base = objects / bench.create_all("base", objects, direct=True)
            lost = bench.rebalance()
        finally:
            bench.close()
    load_after = os.getloadavg()
    print(f"clusters mode, {len(CLUSTERS)} physical clusters, probe period {probe_period:g} s,", end=" ")
    print(f"{os.cpu_count()} cores")
    print(
        "Cluster create -> first synced object: "
        + ", ".join(f"{n} {s:.2f} s" for n, s in zip(CLUSTERS, firsts, strict=True))
        + f" (median {statistics.median(firsts):.2f} s)"
    )
    print(
        f"a cluster goes away: NotReady after {lost['not_ready']:.2f} s; its replicas moved in kcp after"
        f" {lost['kcp']:.2f} s, running 3+3 in the other clusters after {lost['clusters']:.2f} s"
    )
    print(f"syncing {objects} ConfigMaps to 3 clusters (8 creating clients):")
    print(f"  1 worker process    {one:7.1f} obj/s  ratio syncflow/baseline {one / base:.3f}")
    print(f"  3 worker processes  {three:7.1f} obj/s  ratio syncflow/baseline {three / base:.3f}", end="")
    print(f"  (x{three / one:.2f} the single worker)")
    print(f"  baseline            {base:7.1f} obj/s  (kcp create + cluster create, this process, 8 clients)")
    print(f"  CPU seconds by process, 1 worker: {cpu_one}")
    print(f"  CPU seconds by process, 3 workers: {cpu_three}")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=300, help="ConfigMaps per throughput run")
    parser.add_argument("--probe-period", type=float, default=10.0, help="seconds between probes")
    args = parser.parse_args()
    main(args.objects, args.probe_period)
