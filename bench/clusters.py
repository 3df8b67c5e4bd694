"""Clusters-mode benchmark: kcp, three physical devclusters, real Redis, real ``syncflow clusters`` roles.

1. Cluster create → first synced object: a ConfigMap labelled for a cluster waits in kcp; the
   Cluster is created and the time until the copy exists in that cluster is taken (each of the three
   clusters in turn).
2. Objects/s syncing to three clusters: N ConfigMaps labelled round-robin, created by 8 clients, with 1
   and then 3 worker processes (``--workers 1`` each), until a raw watch of each cluster has seen every
   copy: p50/p99 latency (create response → ADDED), reconciles per object (``task.done key=sync/…``
   lines), API requests per object (every devcluster's ``/debug/requests``, minus the benchmark's own).
3. With syncflow stopped, the baseline: this process doing syncflow's writes per object with 8
   clients (kcp create, the finalizer patch, the copy in its cluster and its state Secret, with the
   bodies syncflow's helpers build), timed as syncflow is, until a raw watch of each cluster has seen
   every copy; the ratio syncflow/baseline is printed with the load average.
4. Rebalance after a cluster goes away (syncflow restarted): a 6-replica Deployment split 2+2+2; one
   cluster's API server is stopped; the times until its Cluster is NotReady and until the two others
   hold 3+3 (in kcp and in the clusters) are taken, with the probe period they depend on.

Run: ``.venv/bin/python bench/clusters.py`` (Redis at 127.0.0.1:6379; the agent's keys are removed).
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    # run as a script: bench/queue.py would shadow the stdlib queue module; bench.e2e is wanted
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import asyncio
import functools
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from bench.copies import engine_copy, engine_state_secret
from bench.e2e import Api, BenchError, Stack
from bench.figures import BASE_CLIENTS, MemoryFigures, ModeFigures, RunOptions, latency_note, mode_figures
from bench.steady import copy_latency, steady_rate
from bench.support import (
    REDIS_URL,
    AgentQueue,
    CpuReading,
    HostReading,
    Memory,
    agent_env,
    cpu_ms,
    create_workspaces,
    done_verbs,
    in_parallel,
    load_average,
    logical_cluster,
    machine_cpu,
    object_name,
    open_watch,
    run_dir,
    said,
    served,
    start_watch_and_beat,
    start_worker_role,
    sync_figures,
    traffic,
    watch_first_seen,
)
from syncflow.api import cluster as cluster_api
from syncflow.api.crdgen import crd
from syncflow.kube.jsonapi import MERGE_PATCH
from syncflow.modes.clusters.identity import finalizer

WORKSPACE = "root:org:bench"
LABEL = "workloads.kcp.dev/cluster"
CLUSTERS = ("east", "north", "west")
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NAMESPACES = ("first", "sync", "steady", "one", "three", "base", "split")
"""The kcp namespaces of the runs."""
BASELINE = (
    "this process does syncflow's writes per object with syncflow's bodies (kcp create, the finalizer"
    " patch on it, the copy in its cluster with its sync labels and annotations, its state Secret); with"
    " 8 clients on syncflow's stack once syncflow is stopped. Both runs last until a raw watch of each"
    " cluster has seen every copy"
)
"""What the fair baseline does."""


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


def config_map(name: str, run: str, cluster: str | None) -> dict[str, Any]:
    """A small ConfigMap of run ``run``, labelled for ``cluster`` (None: for none)."""
    labels = {"bench-run": run, **({LABEL: cluster} if cluster else {})}
    return {"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}


class ClustersBench:
    """One stack: kcp, the three clusters, syncflow's roles; the runs on it."""

    def __init__(
        self,
        stack: Stack,
        session: aiohttp.ClientSession,
        probe_period: float,
        redis_url: str = REDIS_URL,
        latency: str = "0",
    ) -> None:
        self.stack, self.session, self.probe_period = stack, session, probe_period
        self.latency = latency  # devcluster --latency of every API server
        self.redis_url = redis_url
        self.queue = AgentQueue(stack.agent, redis_url)
        self.kcp = Api(session, "")
        self.clusters: dict[str, Api] = {}
        self.ws = f"/clusters/{WORKSPACE}"
        self.workers = 0

    async def setup(self, workers: int) -> None:
        """Devclusters, the workspace with the Cluster CRD and the runs' namespaces, syncflow's roles with
        ``workers`` worker processes."""
        await self.prepare()
        self.start_syncflow(workers)

    async def prepare(self) -> None:
        """Devclusters, the workspace with the Cluster CRD, the runs' namespaces and syncflow's
        environment: everything but syncflow's processes."""
        stack = self.stack
        late = ("--latency", self.latency)
        self.kcp = Api(self.session, stack.devcluster("kcp", "--kcp", *late))
        self.clusters = {name: Api(self.session, stack.devcluster(name, *late)) for name in CLUSTERS}
        await create_workspaces(self.kcp, WORKSPACE)
        if not await served(self.kcp, f"{self.ws}{cluster_api.PATH}"):
            await self.kcp.call("POST", f"{self.ws}{CRDS}", crd(cluster_api.API_TYPE))
            await stack.wait(
                lambda: served(self.kcp, f"{self.ws}{cluster_api.PATH}"), 30, "the Cluster CRD", 0.1
            )
        for namespace in NAMESPACES:
            await self.kcp.call("POST", f"{self.ws}/api/v1/namespaces", {"metadata": {"name": namespace}})
        settings = clusters_settings(stack.work / "kcp" / "kc", self.probe_period)
        stack.env = agent_env(stack, self.redis_url, {**settings, "SYNCFLOW_LOG_LEVEL": "INFO"})

    def start_syncflow(self, workers: int) -> None:
        """Start watch, beat and ``workers`` worker processes (``--workers 1`` each)."""
        start_watch_and_beat(self.stack, "clusters")
        self.workers = 0
        self.add_workers(workers)

    def stop_syncflow(self) -> None:
        """Stop every syncflow role; the devclusters keep running."""
        for name in [n for n in self.stack.processes if n != "kcp" and n not in CLUSTERS]:
            self.stack.stop(name)

    def add_workers(self, total: int) -> None:
        """Run ``total`` worker processes (``--workers 1`` each), each ready."""
        while self.workers < total:
            self.workers += 1
            name = f"worker-{self.workers}"
            start_worker_role(self.stack, "clusters", name, 1)
            self.stack.wait_sync(said(self.stack.work / f"{name}.log", " ready."), 60, f"{name} ready")

    async def register(self, name: str) -> None:
        """Create the Cluster ``name`` for its devcluster."""
        kubeconfig = (self.stack.work / name / "kc").read_text()
        await self.kcp.call("POST", f"{self.ws}{cluster_api.PATH}", cluster_object(name, kubeconfig))

    async def exists(self, api: Api, path: str) -> bool:
        """Whether ``path`` exists on ``api``."""
        status, _ = await api.call("GET", path, ok=(404,))
        return status == 200

    async def until(self, check: Callable[[], Awaitable[bool]], timeout: float, what: str) -> None:
        """Poll ``check`` every 10 ms until it is true."""
        await self.stack.wait(lambda: self._true(check), timeout, what, 0.01)

    @staticmethod
    async def _true(check: Callable[[], Awaitable[bool]]) -> bool | None:
        return True if await check() else None

    async def first_object(self, name: str) -> float:
        """Seconds from creating Cluster ``name`` to the copy of an object waiting for it."""
        path = f"/api/v1/namespaces/first/configmaps/for-{name}"
        await self.kcp.call(
            "POST", f"{self.ws}/api/v1/namespaces/first/configmaps", config_map(f"for-{name}", "first", name)
        )
        started = time.perf_counter()
        await self.register(name)
        await self.until(lambda: self.exists(self.clusters[name], path), 120, f"the first object in {name}")
        return time.perf_counter() - started

    async def create_all(
        self,
        run: str,
        count: int,
        after: Callable[[dict[str, Any], str], Awaitable[object]] | None = None,
        rate: float = 0,
        clients: int = BASE_CLIENTS,
    ) -> dict[str, float]:
        """Create ``count`` ConfigMaps in kcp namespace ``run``, the i-th for ``CLUSTERS[i % 3]`` (labelled
        so unless ``after``, which then copies each itself, as kcp returned it), with ``clients``
        concurrent clients, the ``i``-th not before ``i / rate`` seconds in when ``rate`` is set; returns
        their create times."""
        created: dict[str, float] = {}

        async def create(i: int, name: str) -> None:
            cluster = CLUSTERS[i % len(CLUSTERS)]
            body = config_map(name, run, None if after else cluster)
            _, obj = await self.kcp.call("POST", f"{self.ws}/api/v1/namespaces/{run}/configmaps", body)
            created[name] = time.perf_counter()
            if after is not None:
                await after(obj, cluster)

        await in_parallel([f"cm-{i:05d}" for i in range(count)], create, clients, rate)
        return created

    async def watch_copies(
        self, cluster: str, run: str, seen: dict[str, float], expected: int, opened: asyncio.Event
    ) -> None:
        """Record when each copy of run ``run`` first appears in ``cluster`` (``watch_first_seen``)."""
        await watch_first_seen(
            self.session,
            self.clusters[cluster],
            f"/api/v1/namespaces/{run}/configmaps",
            f"bench-run%3D{run}",
            object_name,
            seen,
            expected,
            opened=opened,
        )

    async def sync_run(self, run: str, count: int, timeout: float) -> dict[str, Any]:
        """Create ``count`` ConfigMaps in kcp namespace ``run``, labelled round-robin for the clusters, and
        time syncflow until a watch of each cluster has seen every copy."""
        await self.queue.idle(self.stack)
        apis = [self.kcp, *self.clusters.values()]
        before = await traffic(apis)
        done_before, reading = done_verbs(self.stack), CpuReading.now(self.stack, self.queue.redis)
        seen: dict[str, float] = {}
        watchers = await self.watch_all(run, count, seen)
        started = time.perf_counter()
        created = await self.create_all(run, count)
        create_s = time.perf_counter() - started
        await asyncio.wait_for(asyncio.gather(*watchers), self.stack.remaining(timeout))
        cpu = self.stack.cpu()
        cpu.subtract(reading.groups)
        await self.queue.idle(self.stack, timeout)  # the echoes' runs drain at the workers' pace
        after = await traffic(apis)
        sides = dict(
            zip(("kcp", *CLUSTERS), (a - b for a, b in zip(after, before, strict=True)), strict=True)
        )
        done = done_verbs(self.stack) - done_before
        spent = reading.spent(self.stack, self.queue.redis, count)
        return sync_figures(started, created, seen, create_s, sides, done, cpu, spent)

    async def watch_all(self, run: str, count: int, seen: dict[str, float]) -> list[asyncio.Task[None]]:
        """Open a raw watch of each cluster's copies of run ``run``'s ``count`` objects (``create_all``'s
        round-robin share each), recording in ``seen`` (names differ across clusters)."""
        return [
            await open_watch(
                functools.partial(self.watch_copies, name, run, seen, len(range(k, count, len(CLUSTERS))))
            )
            for k, name in enumerate(CLUSTERS)
        ]

    async def steady_run(self, run: str, count: int, rate: float, timeout: float) -> dict[str, float]:
        """The steady phase (``bench.steady.copy_latency``): ``count`` ConfigMaps labelled round-robin
        created at ``rate`` per second, create → copy on a watch of its cluster."""
        await self.queue.idle(self.stack)

        async def create(rate: float) -> dict[str, float]:
            return await self.create_all(run, count, rate=rate)

        return await copy_latency(
            self.stack, functools.partial(self.watch_all, run, count), create, rate, timeout
        )

    async def baseline(self, count: int, clients: int = BASE_CLIENTS) -> dict[str, float]:
        """With syncflow stopped: per object, the kcp create (unlabelled), the finalizer patch on it
        (conditional on the version read), the copy in its cluster and its state Secret with the bodies
        syncflow's own helpers build, ``clients`` concurrent clients. Timed, as the syncflow run is,
        until a raw watch of each cluster has seen every copy (both runs pay for those watches)."""
        workspace = await logical_cluster(self.kcp, WORKSPACE)
        for cluster in self.clusters.values():
            await cluster.call("POST", "/api/v1/namespaces", {"metadata": {"name": "base"}})
        apis = [self.kcp, *self.clusters.values()]
        before = sum([(await api.counts()).total() for api in apis])
        seen: dict[str, float] = {}
        watchers = await self.watch_all("base", count, seen)
        busy = machine_cpu()

        async def copy(obj: dict[str, Any], cluster: str) -> None:
            meta = obj["metadata"]
            finalizers = {
                "metadata": {"finalizers": [finalizer(cluster)], "resourceVersion": meta["resourceVersion"]}
            }
            path = f"{self.ws}/api/v1/namespaces/base/configmaps/{meta['name']}"
            await self.kcp.call("PATCH", path, finalizers, content_type=MERGE_PATCH)
            # as syncflow's source carries it: labelled for its cluster
            labelled = {**obj, "metadata": {**meta, "labels": {**meta["labels"], LABEL: cluster}}}
            body = engine_copy(labelled, cluster=workspace, namespace="base", agent=self.stack.agent)
            secret = engine_state_secret(labelled, cluster=workspace, state_namespace="default")
            await self.clusters[cluster].call("POST", "/api/v1/namespaces/base/configmaps", body)
            await self.clusters[cluster].call("POST", "/api/v1/namespaces/default/secrets", secret)

        started = time.perf_counter()
        try:
            await self.create_all("base", count, copy, clients=clients)
            await asyncio.wait_for(asyncio.gather(*watchers), self.stack.remaining(60))
        finally:
            for watcher in watchers:
                watcher.cancel()
        if len(seen) < count:
            raise self.stack.fail(f"the baseline's watches saw {len(seen)} of {count} copies")
        elapsed = max(seen.values()) - started  # as the syncflow run's
        # the user's kcp creates are not syncflow's work: left out, as in the syncflow run
        calls = sum([(await api.counts()).total() for api in apis]) - before - count
        return {
            "rate": count / elapsed,
            "elapsed": elapsed,
            "calls": calls / count,
            "cpu_ms": cpu_ms(busy, count),
        }

    async def ready(self, name: str) -> str:
        """The status of Cluster ``name``'s Ready condition ("" while it has none)."""
        _, cluster = await self.kcp.call("GET", f"{self.ws}{cluster_api.PATH}/{name}")
        conditions = (cluster.get("status") or {}).get("conditions") or []
        return next((c["status"] for c in conditions if c["type"] == "Ready"), "")

    async def replicas(self, api: Api, prefix: str, names: tuple[str, ...]) -> dict[str, int]:
        """The replicas of each ``web--<name>`` shard in namespace ``split`` of ``api`` that exists."""
        out = {}
        for name in names:
            status, shard = await api.call(
                "GET", f"{prefix}/apis/apps/v1/namespaces/split/deployments/web--{name}", ok=(404,)
            )
            if status == 200:
                out[name] = int(shard["spec"]["replicas"])
        return out

    async def rebalance(self) -> dict[str, float]:
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
        await self.kcp.call(
            "POST",
            f"{self.ws}/apis/apps/v1/namespaces/split/deployments",
            {"metadata": {"name": "web"}, "spec": spec},
        )
        split = {"east": 2, "north": 2, "west": 2}
        await self.until(
            lambda: self._equal(self.replicas(self.kcp, self.ws, CLUSTERS), split), 60, "the 2+2+2 split"
        )
        started = time.perf_counter()
        self.stack.stop("west")
        moved = {"east": 3, "north": 3}
        checks: dict[str, Callable[[], Awaitable[bool]]] = {
            "not_ready": lambda: self._equal(self.ready("west"), "False"),
            "kcp": lambda: self._equal(self.replicas(self.kcp, self.ws, CLUSTERS), {**moved, "west": 0}),
            "clusters": lambda: self._equal(self._in_clusters(("east", "north")), moved),
        }
        seen: dict[str, float] = {}

        async def all_seen() -> bool:
            for name, check in checks.items():
                if name not in seen and await check():
                    seen[name] = time.perf_counter() - started
            return len(seen) == len(checks)

        await self.until(all_seen, 120, f"the rebalance (seen {seen})")
        return seen

    async def _in_clusters(self, names: tuple[str, ...]) -> dict[str, int]:
        """``replicas`` of each cluster's own shard, in that cluster."""
        out: dict[str, int] = {}
        for name in names:
            out |= await self.replicas(self.clusters[name], "", (name,))
        return out

    @staticmethod
    async def _equal(value: Awaitable[object], expected: object) -> bool:
        return await value == expected

    def close(self) -> None:
        """Stop every process and remove the agent's keys."""
        self.stack.stop_all()
        self.queue.cleanup()
        self.queue.close()


async def on_stack(
    prefix: str,
    logs: str | None,
    budget: float,
    probe_period: float,
    redis_url: str,
    scenario: Callable[[ClustersBench], Awaitable[Any]],
    latency: str = "0",
) -> Any:
    """Run ``scenario`` on a fresh stack (``latency``: devcluster ``--latency``), then stop it."""
    with tempfile.TemporaryDirectory() as scratch:
        stack = Stack(run_dir(prefix, logs, scratch), f"bench{uuid.uuid4().hex[:8]}", budget)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as session:
            bench = ClustersBench(stack, session, probe_period, redis_url, latency)
            try:
                return await scenario(bench)
            finally:
                bench.close()


Measured = tuple[dict[str, Any], MemoryFigures, dict[str, float], dict[str, float] | None]
"""A sync run's figures, its memory, its steady phase's, and the baseline's (None: not run)."""


async def measure(options: RunOptions, redis_url: str) -> ModeFigures:
    """``python -m bench``'s clusters figures: ``options.objects`` ConfigMaps to 3 clusters with
    ``options.workers`` worker processes, the steady phase, then the baseline with ``BASE_CLIENTS`` clients
    on the same stack, and with as many clients as ``options.workers`` on a fresh one."""
    objects = options.objects

    async def scenario(bench: ClustersBench) -> Measured:
        await bench.setup(options.workers)
        for name in CLUSTERS:
            await bench.first_object(name)
        memory = Memory(bench.stack, bench.queue.redis)
        r = await bench.sync_run("sync", objects, 400)
        used = memory.end(objects, r["half_at"])
        steady = (
            await bench.steady_run("steady", options.steady, steady_rate(r["rate"]), 400)
            if options.steady
            else {}
        )
        if not options.baseline:
            return r, used, steady, None
        bench.stop_syncflow()
        return r, used, steady, await bench.baseline(objects)

    async def fair(bench: ClustersBench) -> dict[str, float]:
        await bench.prepare()  # syncflow never started
        return await bench.baseline(objects, options.workers)

    r, memory, steady, base = await on_stack(
        "clusters-", options.logs, 600, 10.0, redis_url, scenario, options.latency
    )
    same = None
    if options.baseline:
        same = (
            options.workers,
            await on_stack("clusters-base-", options.logs, 600, 10.0, redis_url, fair, options.latency),
        )
    work = f"{objects} ConfigMaps to 3 clusters, {options.workers} worker processes"
    work += latency_note(options.latency)
    return mode_figures("clusters", work, BASELINE, r, ("kcp", *CLUSTERS), base, memory, steady, same)


async def main(args: argparse.Namespace) -> None:
    load_before = HostReading.now()

    async def scenario(bench: ClustersBench) -> None:
        await bench.setup(1)
        firsts = [await bench.first_object(name) for name in CLUSTERS]
        one = await bench.sync_run("one", args.objects, args.budget)
        bench.add_workers(3)
        three = await bench.sync_run("three", args.objects, args.budget)
        bench.stop_syncflow()
        base = await bench.baseline(args.objects)
        bench.start_syncflow(3)
        lost = await bench.rebalance()
        report(args, firsts, one, three, base, lost, load_before)

    await on_stack("clusters-", args.logs, args.budget, args.probe_period, REDIS_URL, scenario)


def report(
    args: argparse.Namespace,
    firsts: list[float],
    one: dict[str, Any],
    three: dict[str, Any],
    base: dict[str, float],
    lost: dict[str, float],
    load_before: HostReading,
) -> None:
    """Print the figures."""
    lines = [
        f"clusters mode, {len(CLUSTERS)} physical clusters, probe period {args.probe_period:g} s",
        "Cluster create -> first synced object: "
        + ", ".join(f"{n} {s:.2f} s" for n, s in zip(CLUSTERS, firsts, strict=True))
        + f" (median {statistics.median(firsts):.2f} s)",
        f"syncing {args.objects} ConfigMaps to 3 clusters (8 creating clients):",
    ]
    for workers, r in ((1, one), (3, three)):
        lines += [
            f"  {workers} worker process(es): {r['rate']:7.1f} obj/s  ratio syncflow/baseline"
            f" {r['rate'] / base['rate']:.3f}"
            + (f"  (x{r['rate'] / one['rate']:.2f} the single worker)" if r is three else ""),
            f"    latency p50 {r['p50']:.0f} ms  p99 {r['p99']:.0f} ms  (kcp create response -> ADDED on"
            f" a watch of its cluster); reconciles/object {r['sync']:.2f} sync  {r['status']:.2f} status",
            f"    API requests/obj {r['kcp'] + sum(r[n] for n in CLUSTERS):.2f}  by method: {r['methods']}",
            f"    CPU seconds {r['cpu']}",
        ]
    lines += [
        f"  baseline            {base['rate']:7.1f} obj/s  (kcp create + cluster create, this process,"
        f" 8 clients; {base['calls']:.2f} API requests/obj)",
        f"a cluster goes away: NotReady after {lost['not_ready']:.2f} s; its replicas moved in kcp after"
        f" {lost['kcp']:.2f} s, running 3+3 in the other clusters after {lost['clusters']:.2f} s",
        load_average(load_before),
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=300, help="ConfigMaps per throughput run")
    parser.add_argument("--probe-period", type=float, default=10.0, help="seconds between probes")
    parser.add_argument("--budget", type=float, default=600, help="seconds the whole run may take")
    parser.add_argument("--logs", help="keep the process logs in a new directory under this one")
    try:
        asyncio.run(main(parser.parse_args()))
    except BenchError as exc:
        raise SystemExit(str(exc)) from None
