"""Benchmark of edge-mode upsync by polling: 500 objects in a p-cluster upsynced into a mailbox workspace,
the cost of each poll, and the lag from a downstream change to the mailbox — with 1 and with 2 worker
processes, against a bare script doing the same lists and writes.

Per worker count, a fresh kcp devcluster (mailbox ``root:edge:mb1`` with the EdgeSyncConfig CRD), a
fresh p-cluster devcluster holding 500 ConfigMaps, real Redis and real ``syncflow edge`` roles (watch,
beat, a worker role with ``--workers N``; upsync period 5 s), then:

1. an EdgeSyncConfig upsyncs the 500 ConfigMaps: objects/s until all are in the mailbox, API requests
   per object (both devclusters' ``/debug/requests``, minus the benchmark's own);
2. steady state, nothing changing: API requests per poll on each side and ms per poll (the ``poll``
   task's ``duration_ms``) over several polls;
3. lag: one ConfigMap changed in the p-cluster at a random moment of the poll period, 10 times; the
   time until the mailbox shows the change (p50 / max);
4. the baseline: the same poll done by this process (a paged list of the p-cluster's objects and of
   the mailbox's objects' metadata: all a poll reads of the copies), and the 500 listed objects'
   copies written into the mailbox directly (8 clients, the bodies syncflow's helpers build), until a
   raw watch of the mailbox has seen every copy.

Run: ``.venv/bin/python bench/edge.py`` (Redis at 127.0.0.1:6379; the agents' keys are removed).
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
import datetime
import random
import re
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from bench.copies import engine_copy
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
from bench.support import (
    REDIS_URL,
    AgentQueue,
    CpuReading,
    HostReading,
    Memory,
    agent_env,
    apply_crds,
    cpu_ms,
    create_workspaces,
    done_verbs,
    in_parallel,
    load_average,
    machine_cpu,
    open_watch,
    run_dir,
    said,
    start_watch_and_beat,
    start_worker_role,
    traffic,
    watch_first_seen,
    workspace_kubeconfig,
)
from syncflow.kube import jsonapi
from syncflow.sync.reconciler import SOURCE_VERSION_ANNOTATION

MAILBOX = "root:edge:mb1"
CONFIGS = "apis/edge.kcp.io/v1alpha1/edgesyncconfigs"
NAMESPACE = "up"
LAG_CHANGES = 10
"""At most this many changes are timed in ``python -m bench``'s edge row (each takes about a period)."""
STEADY_POLLS = 3
"""Polls with nothing changing that ``python -m bench``'s edge row times (each takes a period)."""
SELECTOR = "bench%3Dup"
POLLS = 5
"""Bare polls the baseline times (its poll's figures are their mean)."""
BASELINE = (
    "this process lists each side once (paged; of the mailbox, the objects' metadata only, as a poll"
    " reads the copies) and writes the listed objects' copies into the mailbox directly (one create"
    " each, with syncflow's bodies: sync labels and annotations), timed by the list and until a raw"
    " watch of the mailbox has seen every copy; with 8 clients on syncflow's stack once syncflow is"
    " stopped. syncflow's obj/s run from its first poll's start to the last copy on a raw watch of the"
    " mailbox"
)
"""What the fair baseline does."""


def _name(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["name"])


def log_time(line: str) -> float:
    """Epoch seconds of a syncflow log line's time of day (``HH:MM:SS.mmm``, local time), taking the day
    that puts it nearest to now."""
    clock = datetime.datetime.strptime(line.split(" ", 1)[0], "%H:%M:%S.%f").time()
    today = datetime.date.today()
    days = (today - datetime.timedelta(days=1), today, today + datetime.timedelta(days=1))
    stamps = [datetime.datetime.combine(day, clock).timestamp() for day in days]
    return min(stamps, key=lambda stamp: abs(stamp - time.time()))


def config_map(name: str, value: str = "0") -> dict[str, Any]:
    """A small ConfigMap selected by the upsync selector."""
    return {"metadata": {"name": name, "labels": {"bench": "up"}}, "data": {"value": value, "pad": "x" * 64}}


def edge_sync_config(name: str, direction: str, selector: dict[str, Any]) -> dict[str, Any]:
    """EdgeSyncConfig ``name`` syncing the ConfigMaps ``selector`` selects, in ``direction``
    (``downSyncedResources`` or ``upSyncedResources``)."""
    resource = {"version": "v1", "kind": "ConfigMap", **selector}
    return {
        "apiVersion": "edge.kcp.io/v1alpha1",
        "kind": "EdgeSyncConfig",
        "metadata": {"name": name},
        "spec": {direction: [resource]},
    }


class EdgeBench:
    """One run: setup with ``workers`` worker processes, the initial upsync, polls, lag, baseline."""

    def __init__(
        self,
        stack: Stack,
        session: aiohttp.ClientSession,
        objects: int,
        period: float,
        redis_url: str = REDIS_URL,
        latency: str = "0",
    ) -> None:
        self.stack, self.session, self.objects, self.period = stack, session, objects, period
        self.latency = latency  # devcluster --latency of both API servers
        self.redis_url = redis_url
        self.queue = AgentQueue(stack.agent, redis_url)
        self.kcp = self.pcluster = Api(session, "")
        self.mb = f"/clusters/{MAILBOX}"

    async def setup(self, workers: int) -> None:
        """Devclusters, the mailbox with its CRD, the p-cluster's objects, then the syncer's roles."""
        await self.prepare()
        await self.fill()
        start_watch_and_beat(self.stack, "edge")
        start_worker_role(self.stack, "edge", "worker", workers)
        self.wait_listed()
        self.stack.wait_sync(said(self.stack.work / "worker.log", " ready."), 60, "the worker role ready")

    async def fill(self) -> None:
        """The p-cluster's objects to upsync."""
        await in_parallel(
            [f"cm-{i}" for i in range(self.objects)],
            lambda _, name: self.pcluster.call(
                "POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", config_map(name)
            ),
        )

    async def prepare(self) -> None:
        """Devclusters, the mailbox with its CRD, the namespaces and the syncer's environment: everything
        but the p-cluster's objects and the syncer's processes."""
        stack = self.stack
        self.pcluster = Api(self.session, stack.devcluster("pcluster", "--latency", self.latency))
        self.kcp = Api(self.session, stack.devcluster("kcp", "--kcp", "--latency", self.latency))
        await create_workspaces(self.kcp, MAILBOX)
        apply_crds(stack, workspace_kubeconfig(stack, self.kcp, MAILBOX), "edge")
        for api, prefix in ((self.kcp, self.mb), (self.pcluster, "")):
            for namespace in (NAMESPACE, "base"):
                await api.call("POST", f"{prefix}/api/v1/namespaces", {"metadata": {"name": namespace}})
        await self.pcluster.call("POST", "/api/v1/namespaces", {"metadata": {"name": "syncflow"}})
        stack.env = agent_env(
            stack,
            self.redis_url,
            {
                "SYNCFLOW_KUBECONFIG": str(stack.work / "pcluster" / "kc"),
                "SYNCFLOW_KCP_KUBECONFIG": str(stack.work / "kcp" / "kc"),
                "SYNCFLOW_WORKSPACE_CLUSTER": MAILBOX,
                "SYNCFLOW_NAMESPACE": "syncflow",
                "SYNCFLOW_UPSYNC_PERIOD": str(self.period),
                "SYNCFLOW_RESYNC_PERIOD": "3600",
                "SYNCFLOW_STATUS_PERIOD": "3600",
            },
        )

    def wait_listed(self) -> None:
        """Wait until the watcher has listed the mailbox's EdgeSyncConfigs."""
        listed = said(self.stack.work / "watch.log", "watch.listed watch=kcp:edgesyncconfigs")
        self.stack.wait_sync(listed, 60, "the watcher to list the EdgeSyncConfigs")

    def polls(self) -> list[float]:
        """``duration_ms`` of every finished poll task so far."""
        return [
            float(m.group(1))
            for line in self.stack.log_lines("worker")
            if "task.done key=poll/" in line and (m := re.search(r"duration_ms=([0-9.]+)", line))
        ]

    async def _counts(self) -> list[Counter[str]]:
        return await traffic([self.kcp, self.pcluster])

    async def initial(self, timeout: float) -> dict[str, float]:
        """Create the EdgeSyncConfig; objects/s from the first poll's start (when the rule exists: the
        load a bare client does as one list and the writes) to the last copy on a raw watch of the
        mailbox, the seconds from the config's creation to that poll, and the machine's busy CPU per object
        from the config's creation until the queue is idle."""
        before, done_before = await self._counts(), done_verbs(self.stack)
        reading = CpuReading.now(self.stack, self.queue.redis)
        selector = {"namespace": NAMESPACE, "labelSelector": {"matchLabels": {"bench": "up"}}}
        body = edge_sync_config("bench", "upSyncedResources", selector)
        seen: dict[str, float] = {}
        watch = await self.watch_mailbox(NAMESPACE, seen, self.objects, timeout)
        epoch = time.time() - time.perf_counter()  # a perf_counter reading + epoch: wall-clock seconds
        created = time.perf_counter()
        await self.kcp.call("POST", f"{self.mb}/{CONFIGS}", body)
        await asyncio.wait_for(watch, timeout)
        polled = self.poll_started() - epoch
        elapsed = max(seen.values()) - polled
        await self.queue.idle(self.stack, 60)
        spent = reading.spent(self.stack, self.queue.redis, self.objects)
        after = await self._counts()
        kcp, pcluster = after[0] - before[0], after[1] - before[1]
        done = done_verbs(self.stack) - done_before
        return {
            "rate": self.objects / elapsed,
            "elapsed": elapsed,
            "half_at": percentile(list(seen.values()), 50),  # when half the copies had landed
            "reaction": polled - created,
            "kcp": kcp.total() / self.objects,
            "pcluster": pcluster.total() / self.objects,
            "sync": done["sync"] / self.objects,
            "status": done["status"] / self.objects,
            **spent,
        }

    async def watch_mailbox(
        self, namespace: str, seen: dict[str, float], expected: int, timeout: float
    ) -> asyncio.Task[None]:
        """A raw watch of the mailbox's selected ConfigMaps in ``namespace`` for ``timeout`` seconds,
        recording in ``seen`` when each first appears, until ``expected`` are (open when returned)."""
        path = f"{self.mb}/api/v1/namespaces/{namespace}/configmaps"
        return await open_watch(
            lambda opened: watch_first_seen(
                self.session,
                self.kcp,
                path,
                SELECTOR,
                _name,
                seen,
                expected,
                timeout=max(1, int(timeout)),
                opened=opened,
            )
        )

    def poll_started(self) -> float:
        """When the worker role received its first ``poll`` task (epoch seconds, from its log)."""
        for line in self.stack.log_lines("worker"):
            if "Task syncflow.poll[" in line and " received" in line:
                return log_time(line)
        raise BenchError("the worker log shows no poll task")

    async def steady(self, polls: int) -> dict[str, Any]:
        """Requests per poll period on each side (everything syncflow sends meanwhile: its Lease renewals
        and status checks too) and ms per poll task, over ``polls`` polls with nothing changing."""
        done = len(self.polls())
        await self.stack.wait(lambda: self._polled(done + 1), 3 * self.period, "a poll", 0.05)
        before, start = await self._counts(), len(self.polls())
        await self.stack.wait(
            lambda: self._polled(start + polls), (polls + 2) * self.period, f"{polls} polls", 0.05
        )
        await self.queue.idle(self.stack)
        after = await self._counts()
        durations = self.polls()[start : start + polls]
        kcp, pcluster = after[0] - before[0], after[1] - before[1]
        methods = " ".join(
            f"{side} {method} {n / polls:.1f}"
            for side, calls in (("mailbox", kcp), ("p-cluster", pcluster))
            for method, n in sorted(calls.items())
        )
        return {
            "kcp": kcp.total() / polls,
            "pcluster": pcluster.total() / polls,
            "ms": sum(durations) / len(durations),
            "max_ms": max(durations),
            "methods": methods,
        }

    async def _polled(self, count: int) -> bool | None:
        return True if len(self.polls()) >= count else None

    async def lag(self, changes: int) -> dict[str, float]:
        """Change an object downstream at a random moment, ``changes`` times; time until the mailbox has
        it."""
        lags: list[float] = []
        for i in range(changes):
            await asyncio.sleep(random.uniform(0, self.period))
            name = f"cm-{random.randrange(self.objects)}"
            value = f"change-{i}"
            await self.pcluster.call(
                "PUT", f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}", config_map(name, value)
            )
            changed = time.perf_counter()

            async def arrived(name: str = name, value: str = value) -> bool | None:
                _, obj = await self.kcp.call(
                    "GET", f"{self.mb}/api/v1/namespaces/{NAMESPACE}/configmaps/{name}"
                )
                return True if obj.get("data", {}).get("value") == value else None

            await self.stack.wait(arrived, 4 * self.period, f"change {i} in the mailbox", 0.02)
            lags.append((time.perf_counter() - changed) * 1000)
        return {
            "p50": percentile(lags, 50),
            "p99": percentile(lags, 99),
            "max": max(lags),
            "mean": sum(lags) / len(lags),
        }

    async def baseline(self, clients: int = BASE_CLIENTS) -> dict[str, float]:
        """One poll done directly (a paged list of each side, of the mailbox's metadata only), and the
        copies of the listed objects written into the mailbox directly by ``clients`` concurrent clients,
        with the bodies syncflow's helpers build (sync labels and annotations, the source's version);
        its objects/s count the time of one such poll and of the writes until a raw watch of the mailbox
        has seen every copy, as syncflow's run is timed (the load of an initial upsync), and so does its
        CPU per object (the machine's: the writes' and one poll's share of the polls timed)."""
        before = await self.kcp.counts() + await self.pcluster.counts()
        timings = []
        listed: list[dict[str, Any]] = []
        busy = machine_cpu()
        for _ in range(POLLS):
            started = time.perf_counter()
            listed = await self._bare_poll()
            timings.append((time.perf_counter() - started) * 1000)
        poll_busy = (machine_cpu() - busy) / POLLS
        after = await self.kcp.counts() + await self.pcluster.counts()
        poll_calls = (after - before).total() / POLLS
        seen: dict[str, float] = {}
        path = f"{self.mb}/api/v1/namespaces/base/configmaps"
        watch = await self.watch_mailbox("base", seen, len(listed), self.stack.remaining(3600))
        agent = self.stack.agent

        def upsynced(obj: dict[str, Any]) -> dict[str, Any]:
            source = {"apiVersion": "v1", "kind": "ConfigMap", **obj}
            version = {SOURCE_VERSION_ANNOTATION: obj["metadata"]["resourceVersion"]}
            return engine_copy(source, cluster=agent, namespace="base", agent=agent, annotations=version)

        # its CPU: the writes' and one poll's, as its objects/s count their time
        started, busy = time.perf_counter(), machine_cpu() - poll_busy
        try:
            await in_parallel(listed, lambda _, obj: self.kcp.call("POST", path, upsynced(obj)), clients)
            await asyncio.wait_for(watch, self.stack.remaining(60))
        finally:
            watch.cancel()
        if len(seen) < len(listed):
            raise self.stack.fail(f"the baseline's watch saw {len(seen)} of {len(listed)} copies")
        machine_ms = cpu_ms(busy, self.objects)
        elapsed = max(seen.values()) - started
        writes = (await self.kcp.counts() + await self.pcluster.counts() - after).total()
        poll_ms = sum(timings) / len(timings)
        return {
            "poll_ms": poll_ms,
            "poll_calls": poll_calls,
            "rate": self.objects / (elapsed + poll_ms / 1000),
            "calls": writes / self.objects,
            "cpu_ms": machine_ms,
        }

    async def _bare_poll(self) -> list[dict[str, Any]]:
        """A poll's lists done directly: the p-cluster's selected objects (returned) and the mailbox's
        copies' metadata, each paged."""
        objects: list[dict[str, Any]] = []
        for api, prefix, accept in (
            (self.pcluster, "", jsonapi.JSON),
            (self.kcp, self.mb, jsonapi.METADATA_LIST),
        ):
            token = ""
            while True:
                query = f"labelSelector={SELECTOR}&limit=500" + (f"&continue={token}" if token else "")
                _, page = await api.call(
                    "GET", f"{prefix}/api/v1/namespaces/{NAMESPACE}/configmaps?{query}", accept=accept
                )
                if api is self.pcluster:
                    objects.extend(page["items"])
                token = page["metadata"].get("continue", "")
                if not token:
                    break
        return objects


async def one_run(
    workers: int,
    args: argparse.Namespace,
    redis_url: str = REDIS_URL,
    upsync_only: bool = False,
    lag: bool = False,
) -> tuple[dict[str, dict[str, Any]], MemoryFigures]:
    """Everything with ``workers`` worker processes, on fresh devclusters (``upsync_only``: the initial
    upsync and the baseline, and with ``lag`` the lag of ``args.changes`` changes too), and the memory the
    initial upsync took."""
    async with on_stack(f"edge-{workers}-", args, redis_url) as bench:
        stack = bench.stack
        await bench.setup(workers)
        memory = Memory(stack, bench.queue.redis)
        results = {"initial": await bench.initial(args.budget)}
        used = memory.end(args.objects, results["initial"]["half_at"])
        if not upsync_only:
            results["steady"] = await bench.steady(args.polls)
        if not upsync_only or lag:
            results["lag"] = await bench.lag(args.changes)
        for name in [n for n in stack.processes if n not in ("kcp", "pcluster")]:
            stack.stop(name)
        results["base"] = await bench.baseline()
    return results, used


@contextlib.asynccontextmanager
async def on_stack(prefix: str, args: argparse.Namespace, redis_url: str) -> AsyncIterator[EdgeBench]:
    """A fresh stack (nothing started yet) for the block, stopped after it, the agent's keys removed."""
    with tempfile.TemporaryDirectory() as scratch:
        work = run_dir(prefix, args.logs, scratch)
        stack = Stack(work, f"bench{uuid.uuid4().hex[:8]}", args.budget)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as session:
            bench = EdgeBench(stack, session, args.objects, args.period, redis_url, args.latency)
            try:
                yield bench
            finally:
                stack.stop_all()
                bench.queue.cleanup()
                bench.queue.close()


async def fresh_baseline(args: argparse.Namespace, redis_url: str, clients: int) -> dict[str, float]:
    """The baseline with ``clients`` clients on a fresh stack of its own with the same p-cluster objects,
    syncflow never started."""
    async with on_stack("edge-base-", args, redis_url) as bench:
        await bench.prepare()
        await bench.fill()
        return await bench.baseline(clients)


async def measure(options: RunOptions, redis_url: str) -> ModeFigures:
    """``python -m bench``'s edge figures: the initial upsync of ``options.objects`` ConfigMaps with a worker
    role of ``--workers <options.workers>``, then the lag of ``min(options.steady, 10)`` p-cluster changes
    to the mailbox (edge has no create → copy of a new object to time: its objects exist before the
    run), and the baseline's direct writes with ``BASE_CLIENTS`` clients on that stack and with as many
    clients as ``options.workers`` on a fresh one."""
    changes = min(options.steady, LAG_CHANGES)
    argv = [
        "--objects",
        str(options.objects),
        "--changes",
        str(max(changes, 1)),
        "--polls",
        str(STEADY_POLLS),
    ]
    argv += ["--latency", options.latency, *(["--logs", options.logs] if options.logs else [])]
    args = parser().parse_args(argv)
    results, memory = await one_run(options.workers, args, redis_url, upsync_only=changes == 0)
    same = (
        (options.workers, await fresh_baseline(args, redis_url, options.workers))
        if options.baseline
        else None
    )
    work = f"initial upsync of {options.objects} ConfigMaps p-cluster -> mailbox, worker --workers"
    work += f" {options.workers}; change lag over {changes} changes, upsync period {args.period:g} s"
    work += latency_note(options.latency)
    lag, polls = results.get("lag"), results.get("steady")
    steady = (
        {
            "lag_p50": lag["p50"],
            "lag_p99": lag["p99"],
            "poll_ms": polls["ms"],
            "bare_poll_ms": results["base"]["poll_ms"],
        }
        if lag and polls
        else None
    )
    return mode_figures(
        "edge",
        work,
        BASELINE,
        results["initial"],
        ("kcp", "pcluster"),
        results["base"],
        memory,
        steady,
        same,
    )


async def run(args: argparse.Namespace) -> None:
    load_before = HostReading.now()
    began = time.perf_counter()
    results = {workers: (await one_run(workers, args))[0] for workers in (1, 2)}
    print(load_average(load_before))
    print(f"{args.objects} ConfigMaps upsynced from the p-cluster into {MAILBOX}; period {args.period:g} s")
    for workers, r in results.items():
        i, s, lag, base = r["initial"], r["steady"], r["lag"], r["base"]
        print(
            "\n".join(
                [
                    f"syncflow edge, worker --workers {workers}:",
                    f"  initial upsync    {i['rate']:8.1f} obj/s  ({i['elapsed']:.1f} s from the first poll,"
                    f" which started {i['reaction']:.1f} s after the EdgeSyncConfig)"
                    f"  ratio syncflow/baseline {i['rate'] / base['rate']:.3f}",
                    f"  API requests/obj  {i['kcp'] + i['pcluster']:8.2f}  (mailbox {i['kcp']:.2f},"
                    f" p-cluster {i['pcluster']:.2f})",
                    f"  per poll, no change: poll task {s['ms']:.0f} ms (max {s['max_ms']:.0f})"
                    f"  ratio to the bare poll {s['ms'] / base['poll_ms']:.2f}",
                    f"    API requests per period {s['kcp'] + s['pcluster']:.1f} (mailbox {s['kcp']:.1f},"
                    f" p-cluster {s['pcluster']:.1f}; the watcher's rule passes and Lease renewals included)",
                    f"    by method: {s['methods']}",
                    f"  lag, p-cluster change -> mailbox: p50 {lag['p50']:.0f} ms  mean {lag['mean']:.0f} ms"
                    f"  max {lag['max']:.0f} ms  (period {args.period * 1000:.0f} ms)",
                    f"  baseline: bare poll (one paged list per side, the mailbox's metadata only)"
                    f" {base['poll_ms']:.0f} ms,"
                    f" {base['poll_calls']:.1f} requests; direct writes {base['rate']:.1f} obj/s",
                ]
            )
        )
    print(f"total run {time.perf_counter() - began:.0f} s")


def parser() -> argparse.ArgumentParser:
    """This bench's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=500, help="objects in the p-cluster to upsync")
    parser.add_argument("--period", type=float, default=5.0, help="upsync period (seconds)")
    parser.add_argument("--polls", type=int, default=4, help="steady-state polls measured")
    parser.add_argument("--changes", type=int, default=10, help="downstream changes timed")
    parser.add_argument("--budget", type=float, default=300, help="seconds one run may take")
    parser.add_argument("--latency", default="0", help="devcluster --latency of both API servers")
    parser.add_argument("--logs", help="keep the process logs in a new directory under this one")
    return parser


if __name__ == "__main__":
    try:
        asyncio.run(run(parser().parse_args()))
    except BenchError as exc:
        raise SystemExit(str(exc)) from None
