"""Benchmark of workload-mode sync: 1,000 Deployments created in a kcp workspace → copies in the physical
cluster, against a bare script doing the same writes.

Starts a kcp devcluster (workspace ``root:org:ws`` binding root:compute's ``kubernetes`` export, with a
SyncTarget syncing ``apps/v1/deployments``), a physical-cluster devcluster, real Redis and real
``syncflow workload`` roles (watch, beat, one worker role with ``--workers 2``), then:

1. creates 1,000 Deployments over 10 namespaces (8 concurrent clients): objects/s until every copy
   exists in the physical cluster, p50/p99 latency (create response → ADDED on a raw watch of the
   physical cluster's Deployments), reconciles per object (``task.done key=sync/…`` lines), API requests
   per object (both devclusters' ``/debug/requests``, minus the benchmark's own), CPU seconds;
2. with syncflow stopped, the baseline: the same writes syncflow makes per object, with the bodies
   syncflow's own helpers build, done directly by this process with 8 clients — kcp create (the
   user's), the finalizer patch on it, the mapped namespace once per namespace, the physical copy with
   its sync labels and annotations, its last-applied state Secret, and the status written back to kcp
   once (the physical cluster's simulated controller changes a new Deployment's status once; the
   baseline writes back the status it gave a probe Deployment). It is timed as the syncflow run is:
   until raw watches have seen every copy and every status back in kcp.

Run: ``.venv/bin/python bench/workload.py`` (Redis at 127.0.0.1:6379; the agent's keys are removed).
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    # run as a script: bench/queue.py would shadow the stdlib queue module; bench.e2e is wanted
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import asyncio
import contextlib
import functools
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple

import aiohttp

from bench.copies import engine_copy, engine_state_secret
from bench.e2e import Api, BenchError, Stack
from bench.figures import (
    BASE_CLIENTS,
    MemoryFigures,
    ModeFigures,
    RunOptions,
    latency_note,
    mode_figures,
    percentile,
)
from bench.steady import StatusLog, copy_latency, returned, status_lags, steady_rate
from bench.support import (
    REDIS_URL,
    AgentQueue,
    CpuReading,
    HostReading,
    Memory,
    agent_env,
    all_seen,
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
    served,
    start_watch_and_beat,
    start_worker_role,
    sync_figures,
    traffic,
    watch_events,
    watch_first_seen,
)
from syncflow.api.conditions import now
from syncflow.kube.jsonapi import JSON_PATCH, MERGE_PATCH
from syncflow.modes.workload.target import LAST_SYNC_ANNOTATION, SYNC_TARGET_ANNOTATION, WORKSPACE_ANNOTATION
from syncflow.modes.workload.target import finalizer as target_finalizer

WORKSPACE = "root:org:ws"
TARGET = "bench"
SYNC_TARGETS = "apis/workload.kcp.io/v1alpha1/synctargets"
APIS = "apis/apis.kcp.io/v1alpha1"
BASELINE = (
    "this process does syncflow's writes per object with syncflow's bodies (kcp create, finalizer patch,"
    " the mapped namespace once, the physical copy with its sync labels and annotations, its state"
    " Secret, the simulated controller's status written back to kcp once per status change: one); with"
    " 8 clients on syncflow's stack once syncflow is stopped. Both runs last until raw watches have seen"
    " every copy and every status back in kcp"
)
"""What the fair baseline does."""


def shows_returned(deployment: dict[str, Any]) -> bool:
    """Whether a Deployment shows the status the simulated controller gives a one-replica Deployment
    (its replica ready)."""
    return bool((deployment.get("status") or {}).get("readyReplicas") == 1)


def deployment(name: str, run: str) -> dict[str, Any]:
    """A small Deployment."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"bench-run": run}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "nginx:1.27", "env": [{"name": "X", "value": "x" * 64}]}
                    ]
                },
            },
        },
    }


class WorkloadBench:
    """Setup, the syncflow run and the baseline."""

    def __init__(
        self,
        stack: Stack,
        session: aiohttp.ClientSession,
        namespaces: int,
        redis_url: str = REDIS_URL,
        latency: str = "0",
    ) -> None:
        self.stack, self.session, self.redis_url = stack, session, redis_url
        self.latency = latency  # devcluster --latency of both API servers
        self.namespaces = [f"ns-{i}" for i in range(namespaces)]
        self.queue = AgentQueue(stack.agent, redis_url)
        self.kcp = self.physical = Api(session, "")
        self.ws = f"/clusters/{WORKSPACE}"

    async def setup(self, workers: int = 2) -> None:
        """Devclusters, the workspace (types, binding), the SyncTarget, then the syncer's roles (a worker
        role with ``--workers <workers>``)."""
        await self.prepare()
        start_watch_and_beat(self.stack, "workload")
        start_worker_role(self.stack, "workload", "worker", workers)
        await self.kcp.call(
            "POST", f"{self.ws}/apis/apps/v1/namespaces/default/deployments", deployment("warm-up", "warm")
        )
        await self.stack.wait(lambda: self._copies("warm", 1), 90, "the warm-up Deployment's copy", 0.2)
        await self.queue.idle(self.stack)

    async def prepare(self) -> None:
        """Devclusters, the workspace (types, binding), the SyncTarget, the namespaces and the syncer's
        environment: everything but its processes."""
        stack = self.stack
        self.physical = Api(self.session, stack.devcluster("physical", "--latency", self.latency))
        self.kcp = Api(self.session, stack.devcluster("kcp", "--kcp", "--latency", self.latency))
        await create_workspaces(self.kcp, WORKSPACE)
        binding = {"reference": {"export": {"path": "root:compute", "name": "kubernetes"}}}
        await self.kcp.call(
            "POST", f"{self.ws}/{APIS}/apibindings", {"metadata": {"name": "kubernetes"}, "spec": binding}
        )
        await stack.wait(
            lambda: served(self.kcp, f"{self.ws}/apis/apps/v1"), 30, "apps/v1 after binding", 0.2
        )
        target = {
            "metadata": {"name": TARGET},
            "spec": {"supportedAPIExports": [{"export": "kubernetes", "resource": "apps/v1/deployments"}]},
        }
        _, created = await self.kcp.call("POST", f"{self.ws}/{SYNC_TARGETS}", target)
        for namespace in self.namespaces:
            await self.kcp.call("POST", f"{self.ws}/api/v1/namespaces", {"metadata": {"name": namespace}})
        await self.physical.call("POST", "/api/v1/namespaces", {"metadata": {"name": "syncflow"}})
        stack.env = agent_env(
            stack,
            self.redis_url,
            {
                "SYNCFLOW_KUBECONFIG": str(stack.work / "physical" / "kc"),
                "SYNCFLOW_KCP_KUBECONFIG": str(stack.work / "kcp" / "kc"),
                "SYNCFLOW_SYNC_TARGET_NAME": TARGET,
                "SYNCFLOW_SYNC_TARGET_UID": created["metadata"]["uid"],
                "SYNCFLOW_WORKSPACE_CLUSTER": WORKSPACE,
                "SYNCFLOW_NAMESPACE": "syncflow",
                "SYNCFLOW_RESYNC_PERIOD": "3600",
                "SYNCFLOW_HEARTBEAT_PERIOD": "5",
            },
        )

    async def _copies(self, run: str, expected: int) -> bool | None:
        _, listed = await self.physical.call(
            "GET", f"/apis/apps/v1/deployments?labelSelector=bench-run%3D{run}"
        )
        return True if len(listed["items"]) >= expected else None

    async def create_all(
        self, names: list[str], run: str, after: Any = None, rate: float = 0, clients: int = BASE_CLIENTS
    ) -> dict[str, float]:
        """Create ``names`` in kcp (round-robin over the namespaces) with ``clients`` concurrent clients,
        the ``i``-th not before ``i / rate`` seconds in when ``rate`` is set; returns create times."""
        created: dict[str, float] = {}

        async def create(i: int, name: str) -> None:
            namespace = self.namespaces[i % len(self.namespaces)]
            path = f"{self.ws}/apis/apps/v1/namespaces/{namespace}/deployments"
            _, obj = await self.kcp.call("POST", path, deployment(name, run))
            created[name] = time.perf_counter()
            if after is not None:
                await after(obj, namespace)

        await in_parallel(names, create, clients, rate)
        return created

    async def watch_copies(
        self, run: str, seen: dict[str, float], expected: int, opened: asyncio.Event | None = None
    ) -> None:
        """Record when each physical copy of run ``run`` first appears (raw watch stream); ``opened``:
        see ``watch_first_seen``."""
        await self._first_seen(self.physical, "/apis/apps/v1/deployments", run, seen, expected, opened)

    async def watch_returned(
        self, run: str, returned: dict[str, float], expected: int, opened: asyncio.Event
    ) -> None:
        """Record when each kcp Deployment of run ``run`` first shows the status the simulated controller
        gave its copy (raw watch stream)."""
        path = f"{self.ws}/apis/apps/v1/deployments"
        await self._first_seen(self.kcp, path, run, returned, expected, opened, shows_returned)

    async def _first_seen(
        self,
        api: Api,
        path: str,
        run: str,
        seen: dict[str, float],
        expected: int,
        opened: asyncio.Event | None,
        shows: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        selector, timeout = f"bench-run%3D{run}", max(1, int(self.stack.remaining(3600)))
        await watch_first_seen(
            self.session,
            api,
            path,
            selector,
            object_name,
            seen,
            expected,
            timeout=timeout,
            opened=opened,
            shows=shows,
        )

    async def sync_run(self, objects: int, timeout: float) -> dict[str, Any]:
        """Create ``objects`` Deployments in kcp and time syncflow until every copy exists and every
        copy's status is back in kcp (the baseline writes it back too)."""
        run = "sync"
        await self.queue.idle(self.stack)
        before = await traffic([self.kcp, self.physical])
        done_before, reading = done_verbs(self.stack), CpuReading.now(self.stack, self.queue.redis)
        seen: dict[str, float] = {}
        returned: dict[str, float] = {}
        watchers = [
            await open_watch(lambda opened: self.watch_copies(run, seen, objects, opened)),
            await open_watch(lambda opened: self.watch_returned(run, returned, objects, opened)),
        ]
        names = [f"d-{i}" for i in range(objects)]
        started = time.perf_counter()
        created = await self.create_all(names, run)
        create_s = time.perf_counter() - started
        copies, statuses = watchers
        await all_seen(
            self.stack,
            copies,
            seen,
            objects,
            lambda: self._copies(run, objects),
            timeout,
            f"{objects} copies",
        )
        try:  # the statuses' watch ends once all are back
            await asyncio.wait_for(statuses, self.stack.remaining(timeout))
        except TimeoutError:
            pass  # reported below, with the count
        finally:
            for watcher in watchers:
                watcher.cancel()
        if len(seen) < objects or len(returned) < objects:
            raise self.stack.fail(
                f"{objects - len(seen)} copies and {objects - len(returned)} statuses never seen in time"
            )
        cpu = self.stack.cpu()
        cpu.subtract(reading.groups)
        await self.queue.idle(self.stack, timeout)
        kcp, physical = (a - b for a, b in zip(await traffic([self.kcp, self.physical]), before, strict=True))
        done = done_verbs(self.stack) - done_before
        sides = {"kcp": kcp, "physical": physical}
        spent = reading.spent(self.stack, self.queue.redis, objects)
        return sync_figures(started, created, seen, create_s, sides, done, cpu, spent, returned)

    async def watch_statuses(
        self, api: Api, path: str, run: str, log: StatusLog, opened: asyncio.Event
    ) -> None:
        """Record in ``log`` every status change of run ``run``'s Deployments under ``path`` of ``api``,
        as a raw watch stream shows them, until cancelled."""

        def record(kind: str, obj: dict[str, Any]) -> None:
            if kind in ("ADDED", "MODIFIED"):
                log.record(str(obj["metadata"]["name"]), obj.get("status"))

        timeout = max(1, int(self.stack.remaining(3600)))
        await watch_events(
            self.session, api, path, f"bench-run%3D{run}", record, timeout=timeout, opened=opened
        )

    async def steady_run(self, objects: int, rate: float, timeout: float) -> dict[str, Any]:
        """The steady phase (``bench.steady.copy_latency``): ``objects`` Deployments created at ``rate`` per
        second, create → physical copy; and each status change of a copy (the simulated controller's) →
        the same status on its kcp Deployment (``bench.steady.status_lags``), until every copy's latest
        status has stood upstream for a second."""
        run = "steady"
        await self.queue.idle(self.stack)
        names = [f"s-{i}" for i in range(objects)]
        downstream, upstream = StatusLog(), StatusLog()
        sides = [
            (self.physical, "/apis/apps/v1/deployments", downstream),
            (self.kcp, f"{self.ws}/apis/apps/v1/deployments", upstream),
        ]
        statuses = [
            await open_watch(functools.partial(self.watch_statuses, api, path, run, log))
            for api, path, log in sides
        ]
        try:

            async def watch(seen: dict[str, float]) -> list[asyncio.Task[None]]:
                return [await open_watch(lambda opened: self.watch_copies(run, seen, objects, opened))]

            async def create(rate: float) -> dict[str, float]:
                return await self.create_all(names, run, rate=rate)

            figures: dict[str, Any] = await copy_latency(self.stack, watch, create, rate, timeout)
            since: list[float] = []

            async def settled() -> bool | None:
                for task in statuses:
                    if task.done():
                        task.result()  # the watch's own error (or its end)
                        raise self.stack.fail("a status watch ended")
                if not returned(downstream, upstream, names):
                    since.clear()
                    return None
                since[:] = since or [time.perf_counter()]
                return True if time.perf_counter() - since[0] >= 1.0 else None

            await self.stack.wait(settled, timeout, "every steady copy's status upstream", 0.1)
        finally:
            for task in statuses:
                task.cancel()
        lags, missing = status_lags(downstream, upstream)
        figures["status_p50"] = percentile([lag * 1000 for lag in lags], 50) if lags else None
        figures["status_changes"] = len(lags) + missing
        figures["status_missing"] = missing
        return figures

    async def controller_status(self) -> dict[str, Any]:
        """The status the physical cluster's simulated controller gives a new Deployment of the benchmark's
        shape (one probe, untimed): what the baseline writes back, so its status write is as big as
        syncflow's."""
        path = "/apis/apps/v1/namespaces/syncflow/deployments"
        await self.physical.call("POST", path, deployment("status-probe", "probe"))

        async def shown() -> dict[str, Any] | None:
            _, probe = await self.physical.call("GET", f"{path}/status-probe")
            return probe["status"] if shows_returned(probe) else None

        return await self.stack.wait(shown, 30, "the probe Deployment's status", 0.05)

    async def baseline(self, objects: int, clients: int = BASE_CLIENTS) -> dict[str, float]:
        """Syncflow's writes per object with syncflow's bodies, done directly by ``clients`` concurrent
        clients: kcp create, the finalizer patch (conditional on the version read), the mapped namespace
        once, the physical copy with its sync labels and annotations, its state Secret, the controller's
        status written back once. Timed, as the syncflow run is, until raw watches have seen every copy
        and every status back in kcp (both runs pay for those watches)."""
        run = "base"
        status = await self.controller_status()
        cluster = await logical_cluster(self.kcp, WORKSPACE)
        locks: dict[str, asyncio.Lock] = {}
        made: set[str] = set()
        finalizer = target_finalizer(cluster, TARGET)
        before = (await self.kcp.counts()).total() + (await self.physical.counts()).total()
        latencies: list[float] = []
        seen: dict[str, float] = {}
        returned: dict[str, float] = {}
        copies = await open_watch(lambda opened: self.watch_copies(run, seen, objects, opened))
        statuses = await open_watch(lambda opened: self.watch_returned(run, returned, objects, opened))

        async def copy(obj: dict[str, Any], namespace: str) -> None:
            began = time.perf_counter()
            meta = obj["metadata"]
            name = meta["name"]
            path = f"{self.ws}/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
            finalizers = {"metadata": {"finalizers": [finalizer], "resourceVersion": meta["resourceVersion"]}}
            await self.kcp.call("PATCH", path, finalizers, content_type=MERGE_PATCH)
            target = f"base-{namespace}"
            async with locks.setdefault(target, asyncio.Lock()):
                if target not in made:
                    await self.physical.call(
                        "POST", "/api/v1/namespaces", {"metadata": {"name": target}}, (409,)
                    )
                    made.add(target)
            body, secret = copy_bodies(obj, cluster, target, self.stack.agent)
            await self.physical.call("POST", f"/apis/apps/v1/namespaces/{target}/deployments", body)
            await self.physical.call("POST", "/api/v1/namespaces/syncflow/secrets", secret)
            latencies.append((time.perf_counter() - began) * 1000)
            # the one status change of the simulated controller, returned as syncflow returns it
            returned_status = [{"op": "add", "path": "/status", "value": status}]
            await self.kcp.call("PATCH", f"{path}/status", returned_status, content_type=JSON_PATCH)

        started, busy = time.perf_counter(), machine_cpu()
        try:
            await self.create_all([f"b-{i}" for i in range(objects)], run, copy, clients=clients)
            await all_seen(
                self.stack, copies, seen, objects, lambda: self._copies(run, objects), 60, "copies"
            )
            await asyncio.wait_for(statuses, self.stack.remaining(60))
        finally:
            copies.cancel()
            statuses.cancel()
        if len(returned) < objects:
            raise self.stack.fail(f"the baseline's watch saw {len(returned)} of {objects} statuses back")
        elapsed = max(*seen.values(), *returned.values()) - started  # as the syncflow run's
        # the user's kcp creates are not syncflow's work: left out, as in the syncflow run
        calls = (await self.kcp.counts()).total() + (await self.physical.counts()).total() - before - objects
        return {
            "rate": objects / elapsed,
            "elapsed": elapsed,
            "p50": percentile(latencies, 50),
            "p99": percentile(latencies, 99),
            "calls": calls / objects,
            "cpu_ms": cpu_ms(busy, objects),
        }


def copy_bodies(
    obj: dict[str, Any], cluster: str, namespace: str, agent: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The physical copy of kcp Deployment ``obj`` in ``namespace`` and its state Secret, as workload
    mode writes them: the engine's bodies with the SyncTarget's annotations."""
    annotations = {
        SYNC_TARGET_ANNOTATION: TARGET,
        WORKSPACE_ANNOTATION: WORKSPACE,
        LAST_SYNC_ANNOTATION: now(),
    }
    copy = engine_copy(obj, cluster=cluster, namespace=namespace, agent=agent, annotations=annotations)
    return copy, engine_state_secret(obj, cluster=cluster, state_namespace="syncflow")


class Runs(NamedTuple):
    """What ``runs`` measured on one stack."""

    setup_s: float
    synced: dict[str, Any]
    memory: MemoryFigures
    steady: dict[str, Any]
    """The steady phase's figures (empty when it did not run)."""
    base: dict[str, float] | None
    """The baseline's figures (None when it did not run)."""


@contextlib.asynccontextmanager
async def on_stack(
    prefix: str, options: RunOptions, namespaces: int, budget: float, redis_url: str
) -> AsyncIterator[WorkloadBench]:
    """A fresh stack (nothing started yet) for the block, stopped after it, the agent's keys removed."""
    with tempfile.TemporaryDirectory() as scratch:
        work = run_dir(prefix, options.logs, scratch)
        stack = Stack(work, f"bench{uuid.uuid4().hex[:8]}", budget)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as session:
            bench = WorkloadBench(stack, session, namespaces, redis_url, options.latency)
            try:
                yield bench
            finally:
                stack.stop_all()
                bench.queue.cleanup()
                bench.queue.close()


async def runs(options: RunOptions, namespaces: int, budget: float, redis_url: str = REDIS_URL) -> Runs:
    """On one fresh stack: the set-up's seconds, the sync run's figures and memory, the steady phase's
    (``options.steady`` Deployments at half the sync run's objects/s), then the baseline's."""
    objects = options.objects
    async with on_stack("workload-", options, namespaces, budget, redis_url) as bench:
        stack = bench.stack
        began = time.perf_counter()
        await bench.setup(options.workers)
        setup_s = time.perf_counter() - began
        memory = Memory(stack, bench.queue.redis)
        synced = await bench.sync_run(objects, budget)
        used = memory.end(objects, synced["half_at"])
        steady = (
            await bench.steady_run(options.steady, steady_rate(synced["rate"]), budget)
            if options.steady
            else {}
        )
        base = None
        if options.baseline:
            for name in [n for n in stack.processes if n not in ("kcp", "physical")]:
                stack.stop(name)
            base = await bench.baseline(objects)
    return Runs(setup_s, synced, used, steady, base)


async def fresh_baseline(
    options: RunOptions, namespaces: int, budget: float, redis_url: str, clients: int
) -> dict[str, float]:
    """The baseline with ``clients`` clients on a fresh stack of its own, syncflow never started."""
    async with on_stack("workload-base-", options, namespaces, budget, redis_url) as bench:
        await bench.prepare()
        return await bench.baseline(options.objects, clients)


async def run(args: argparse.Namespace) -> None:
    load_before = HostReading.now()
    began = time.perf_counter()
    options = RunOptions(args.objects, 2, args.logs, args.steady, args.latency)
    measured = await runs(options, args.namespaces, args.budget)
    report(options, args.namespaces, measured, time.perf_counter() - began, load_before)


async def measure(options: RunOptions, redis_url: str) -> ModeFigures:
    """``python -m bench``'s workload figures: ``options.objects`` Deployments over 10 namespaces, a worker
    role with ``--workers <options.workers>``, the steady phase, then the baseline with ``BASE_CLIENTS``
    clients on that stack, and with as many clients as ``options.workers`` on a fresh one."""
    measured = await runs(options, 10, 400, redis_url)
    same = None
    if options.baseline:
        same = options.workers, await fresh_baseline(options, 10, 400, redis_url, options.workers)
    work = f"{options.objects} Deployments kcp -> physical cluster, worker --workers {options.workers}"
    work += latency_note(options.latency)
    return mode_figures(
        "workload",
        work,
        BASELINE,
        measured.synced,
        ("kcp", "physical"),
        measured.base,
        measured.memory,
        measured.steady,
        same,
    )


def report(
    options: RunOptions,
    namespaces: int,
    measured: Runs,
    total_s: float,
    load_before: HostReading,
) -> None:
    """Print the figures."""
    r, base, steady = measured.synced, measured.base, measured.steady
    assert base is not None, "this report compares with the baseline"
    bound = "" if r["bound_s"] is None else f" (bound {r['bound_s']:.1f} s)"
    status_ms = "—" if not steady or steady["status_p50"] is None else f"{steady['status_p50']:.0f} ms"
    steady_lines = (
        [
            f"  steady phase      {options.steady} Deployments at {steady['rate']:.1f}/s (half the burst):"
            f" p50 {steady['p50']:.0f} ms  p99 {steady['p99']:.0f} ms (create -> physical copy)",
            f"    status p50 {status_ms}  (status change in the physical cluster ->"
            f" kcp, {steady['status_changes']} changes, {steady['status_missing']} never shown upstream)",
        ]
        if steady
        else []
    )
    print(
        "\n".join(
            [
                load_average(load_before),
                f"{options.objects} Deployments over {namespaces} namespaces of {WORKSPACE}, 8 creating"
                f" clients (setup {measured.setup_s:.1f} s){latency_note(options.latency)}",
                "syncflow workload (watch, beat, worker --workers 2):",
                f"  throughput        {r['rate']:8.1f} obj/s  ({r['elapsed']:.1f} s; creates alone"
                f" {r['create_s']:.1f} s)  ratio syncflow/baseline {r['rate'] / base['rate']:.3f}",
                f"  latency           p50 {r['p50']:.0f} ms  p99 {r['p99']:.0f} ms"
                "  (kcp create response -> ADDED on a physical-cluster watch)",
                f"  last copy         {r['last_s']:.1f} s after the first create{bound}",
                f"  last status back  {r['returned_s']:.1f} s after the first create (in kcp)",
                *steady_lines,
                f"  reconciles/object {r['sync']:8.2f} sync  {r['status']:.2f} status",
                f"  API requests/obj  {r['kcp'] + r['physical']:8.2f}  (kcp {r['kcp']:.2f},"
                f" physical {r['physical']:.2f}; /debug/requests delta minus the benchmark's own)",
                f"    by method: {r['methods']}",
                f"  CPU seconds       {r['cpu']}",
                "baseline, the same writes done directly by this process (8 clients):",
                f"  throughput        {base['rate']:8.1f} obj/s  ({base['elapsed']:.1f} s)",
                f"  latency           p50 {base['p50']:.0f} ms  p99 {base['p99']:.0f} ms"
                "  (kcp create response -> state Secret written)",
                f"  API requests/obj  {base['calls']:8.2f}",
                f"total run {total_s:.0f} s",
            ]
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=1_000, help="Deployments to create")
    parser.add_argument("--namespaces", type=int, default=10, help="kcp namespaces they are spread over")
    parser.add_argument("--budget", type=float, default=400, help="seconds the whole run may take")
    parser.add_argument("--steady", type=int, default=200, help="Deployments of the steady phase (0: none)")
    parser.add_argument("--latency", default="0", help="devcluster --latency of both API servers")
    parser.add_argument("--logs", help="keep the process logs in a new directory under this one")
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    except BenchError as exc:
        raise SystemExit(str(exc)) from None
