"""End-to-end benchmark of publish-mode sync: kcp create → local copy present.

Starts a service-cluster devcluster, a kcp devcluster (org workspace, APIExport ``services``, 10 team
workspaces binding it), real Redis, and real ``syncflow watch``/``beat``/``worker`` processes, then:

1. for each worker count (``--workers``, default 1,2,4 processes of ``worker -c 1``; ``--concurrency``
   sets ``-c``), on a fresh stack:
   creates 1,000 objects over the 10 workspaces (8 concurrent clients; ``--create-rate`` paces them):
   objects/s until every local copy exists, p50/p99 latency (create response → ADDED on a raw watch
   of the local resource), reconciles per object (``task.done key=sync/…`` lines in the worker
   logs), API requests per object (both devclusters' ``/debug/requests``, before/after, minus the
   benchmark's own requests), the request rate per endpoint against its budget (first create → last
   copy), and objects/s and the service devcluster's CPU per object for every 1,000 copies (in the
   order they appear); then, on the same stack, Redis round trips per object in a second run of
   ``--count-objects`` objects (``bench.roundtrips``: MONITOR on the run's private Redis, which would
   slow a timed run); ``--batches 10`` first makes 9 more runs like the first on the same stack and
   prints each run's objects/s, CPU per object (service API server; syncflow) and requests per
   object, the flat-cost check (each run lands on the copies of the runs before it, and each has
   its own creates' burst);
2. on the last stack, queues 10,000 ``sync`` keys of non-existent objects in the bulk lane, creates
   one object and times its sync, printing the bulk backlog still queued when the copy appears;
3. on a fresh stack with syncflow stopped, the fair baseline: the writes the sync needs done by this
   process (kcp create, finalizer patch, namespace create once per namespace, local create,
   state-Secret create), 8 concurrent clients, timed like a syncflow run: until the same raw watch
   has seen every local copy (the watch costs both API server and this process CPU, so both runs pay
   it; ``--baseline-unobserved`` times it by the write responses instead); its writes are shaped like
   syncflow's (``bench.copies``: the finalizer patch through the virtual workspace, the copy's labels
   and annotations, the state Secret's labels and content; ``--baseline-lean`` keeps the smaller
   bodies and direct path of earlier rounds);
   ``--baseline-clients 1,2,4,8`` runs it once per client count, each on a fresh stack, and prints the
   bare script's own scale-out beside syncflow's (a ceiling for as many pool processes: what the API
   servers and this machine allow that concurrency).

``--rounds 5`` repeats steps 1 to 3 five times, printing each round's figures as it ends, then each
round's ratio to its baseline at the same concurrency (without one, to the baseline the figures
use) and their median: a shared VM's speed drifts between runs, and each ratio compares runs made
minutes apart, not hours.

``--latency 20ms`` makes both devclusters answer every API request 20 ms late, like remote API
servers. The load average is printed before and after each run. Run: ``.venv/bin/python bench/e2e.py`` or
``.venv/bin/python -m bench.e2e`` (a private ``redis-server``, stopped at the end).
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    # run as a script: bench/queue.py would shadow the stdlib queue module; bench.support is wanted
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import asyncio
import functools
import os
import re
import signal
import statistics
import subprocess
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from itertools import pairwise
from typing import Any, TypeVar

import aiohttp
import orjson
import yaml

from bench.copies import STATE_NAMESPACE, CopyWrites
from bench.figures import (
    BASE_CLIENTS,
    MemoryFigures,
    ModeFigures,
    RunOptions,
    latency_note,
    mode_figures,
    percentile,
)
from bench.roundtrips import RoundTrips
from bench.steady import copy_latency, steady_rate
from bench.support import (
    BIN,
    REPO,
    SYNCFLOW_GROUPS,
    AgentQueue,
    CpuReading,
    HostReading,
    Memory,
    all_seen,
    apply_crds,
    cpu_ms,
    cpu_summary,
    done_verbs,
    in_parallel,
    load_average,
    logical_cluster,
    machine_cpu,
    middle_rate,
    open_watch,
    private_redis,
    process_stats,
    run_dir,
    said,
    served,
    sync_figures,
    traffic,
    watch_first_seen,
)
from syncflow import tasks as engine_tasks
from syncflow.modes.publish.rules import KCP, SERVICE
from syncflow.queue.keys import ObjectKey

JSON = {"Content-Type": "application/json"}
GROUP, KIND, PLURAL, RULE, EXPORT = "widgets.bench.io", "Widget", "widgets", "bench", "services"
APIS = "apis/apis.kcp.io/v1alpha1"
STEP = 1_000
"""Copies per window of the flat-cost breakdown (objects/s and service CPU per object)."""
COUNTED = "-count"
"""Suffix of the run that counts Redis round trips."""
BASE_COPY = "base-copy"
"""The ``bench-run`` label of the baseline's local copies."""
BASELINE = (
    "this process does the writes the sync needs (kcp create, finalizer patch, namespace once per"
    " namespace, local create, state Secret; syncflow's bodies and paths), timed by the same watch of the"
    " local copies; each client count on a fresh stack"
)
"""What the fair baseline does."""
T = TypeVar("T")
N = TypeVar("N", int, float)
assert engine_tasks.sync  # registers the ``sync`` verb, so keys can be queued from here


class BenchError(SystemExit):
    """A step failed or missed its deadline (the message carries the process log tails)."""


class Stack:
    """The devclusters and syncflow processes of one run, with their logs and a global deadline."""

    def __init__(self, work: Path, agent: str, budget: float) -> None:
        self.work, self.agent = work, agent
        self.deadline = time.monotonic() + budget
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.env: dict[str, str] = {}

    def start(self, name: str, *args: str) -> None:
        """Start ``syncflow <args>`` in its own process group, logging to ``<name>.log``."""
        with (self.work / f"{name}.log").open("wb") as log:
            self.processes[name] = subprocess.Popen(
                [str(BIN / "syncflow"), *args],
                cwd=REPO,
                env=self.env or None,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def devcluster(self, name: str, *extra: str) -> str:
        """Start a devcluster and return its URL once it serves."""
        (self.work / name).mkdir()
        self.start(name, "devcluster", "--port", "0", "--kubeconfig", str(self.work / name / "kc"), *extra)
        log = self.work / f"{name}.log"

        def url() -> str | None:
            found = re.search(r"devcluster (?:\(kcp\) )?serving at (\S+)", log.read_text(errors="replace"))
            return found.group(1) if found else None

        return self.wait_sync(url, 30, f"{name} to serve")

    def stop(self, name: str) -> None:
        """Stop one process group (TERM, then KILL)."""
        process = self.processes.pop(name)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
                process.wait(timeout=10)
                return
            except ProcessLookupError:
                return
            except subprocess.TimeoutExpired:
                continue

    def stop_all(self) -> None:
        """Stop syncflow first, the devclusters last."""
        for name in sorted(self.processes, key=lambda n: n in ("kcp", "service")):
            self.stop(name)

    def fail(self, what: str) -> BenchError:
        """An error naming ``what`` with the tail of every log."""
        tails = "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-2500:]}" for p in sorted(self.work.glob("*.log"))
        )
        return BenchError(f"FAILED: {what}\n{tails}")

    def allow(self, seconds: float) -> None:
        """Let the stack run at least ``seconds`` more (each run on a stack gets the whole budget)."""
        self.deadline = max(self.deadline, time.monotonic() + seconds)

    def remaining(self, timeout: float) -> float:
        """``timeout``, capped by what is left of the run's budget."""
        return min(timeout, self.deadline - time.monotonic())

    def wait_sync(self, check: Callable[[], T | None], timeout: float, what: str) -> T:
        """Poll a synchronous check until it returns a value; fail loudly at the deadline."""
        end = time.monotonic() + self.remaining(timeout)
        while (value := check()) is None:
            if time.monotonic() > end:
                raise self.fail(f"timed out after {timeout:.0f}s waiting for {what}")
            time.sleep(0.05)
        return value

    async def wait(
        self, check: Callable[[], Awaitable[T | None]], timeout: float, what: str, every: float = 0.1
    ) -> T:
        """Poll an async check until it returns a value; fail loudly at the deadline."""
        end = time.monotonic() + self.remaining(timeout)
        while (value := await check()) is None:
            if time.monotonic() > end:
                raise self.fail(f"timed out after {timeout:.0f}s waiting for {what}")
            await asyncio.sleep(every)
        return value

    def cpu(self) -> Counter[str]:
        """CPU seconds used so far by each process group (children included), and by this process."""
        groups = {process.pid: name.split("-")[0] for name, process in self.processes.items()}
        used: Counter[str] = Counter()
        tick = os.sysconf("SC_CLK_TCK")
        for fields in process_stats():
            group = groups.get(int(fields[2]))
            if group is not None:
                used[group] += (int(fields[11]) + int(fields[12])) / tick
        times = os.times()
        used["bench"] = times.user + times.system
        return used

    def log_lines(self, prefix: str) -> list[str]:
        """Every line of the logs whose name starts with ``prefix``."""
        return [
            line
            for p in self.work.glob(f"{prefix}*.log")
            for line in p.read_text(errors="replace").splitlines()
        ]


class Api:
    """Raw JSON calls to one devcluster, counting the requests this benchmark itself makes."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session, self.url, self.mine = session, url, Counter[str]()

    async def call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | list[dict[str, Any]] | None = None,
        ok: tuple[int, ...] = (),
        content_type: str = JSON["Content-Type"],
        accept: str = JSON["Content-Type"],
    ) -> tuple[int, dict[str, Any]]:
        """One request; raises on an unexpected status unless it is in ``ok``."""
        self.mine[method] += 1
        data = orjson.dumps(body) if body is not None else None
        headers = {"Content-Type": content_type, "Accept": accept}
        async with self.session.request(method, self.url + path, data=data, headers=headers) as response:
            payload: dict[str, Any] = orjson.loads(await response.read() or b"{}")
            if response.status >= 300 and response.status not in ok:
                raise BenchError(f"{method} {path}: {response.status} {payload}")
            return response.status, payload

    async def counts(self) -> Counter[str]:
        """The server's request counts by method (this call is not counted by the server)."""
        async with self.session.get(self.url + "/debug/requests") as response:
            return Counter(orjson.loads(await response.read()))


def widget(name: str, run: str, **labels: str) -> dict[str, Any]:
    """A small object of the published resource."""
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": KIND,
        "metadata": {"name": name, "labels": {"bench-run": run, **labels}},
        "spec": {"size": 3, "color": "x" * 64},
    }


def local_crd() -> dict[str, Any]:
    """The service cluster's CRD of the published resource."""
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": KIND.lower(), "kind": KIND},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": schema, "status": schema},
                        }
                    },
                }
            ],
        },
    }


class Bench:
    """One fresh stack's scenario: setup, a syncflow run, the backlog run, or the baseline."""

    def __init__(
        self,
        stack: Stack,
        session: aiohttp.ClientSession,
        workspaces: int,
        redis_url: str,
        *,
        roundtrips: RoundTrips | None = None,
        concurrency: int = 1,
        broker_url: str | None = None,
        latency: str = "0",
        qps: float | None = None,
        create_rate: float = 0,
    ) -> None:
        self.stack, self.session, self.concurrency = stack, session, concurrency
        self.create_rate = create_rate  # kcp creates per second of a syncflow run (0: as fast as they go)
        self.latency = latency  # devcluster --latency of both API servers
        self.roundtrips, self.broker_url = roundtrips, broker_url
        self.qps = qps  # request budget per endpoint (None: syncflow's default)
        self.teams = [f"root:org:team-{i}" for i in range(workspaces)]
        self.clusters: list[str] = []
        self.queue = AgentQueue(stack.agent, redis_url, broker_url)
        self.kcp = self.service = Api(session, "")

    async def setup(self, workers: int = 1) -> None:
        """Devclusters, kcp workspaces and bindings, CRDs, then watch + beat + ``workers`` worker
        processes (``-c 1`` each)."""
        stack = self.stack
        self.service = Api(self.session, stack.devcluster("service", "--latency", self.latency))
        self.kcp = Api(self.session, stack.devcluster("kcp", "--kcp", "--latency", self.latency))
        kcp, service = self.kcp, self.service
        await kcp.call(
            "POST", "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "org"}}
        )
        await kcp.call(
            "POST", f"/clusters/root:org/{APIS}/apiexports", {"metadata": {"name": EXPORT}, "spec": {}}
        )
        claims = [
            {"group": g, "resource": r, "all": True, "state": "Accepted"}
            for g, r in (("", "events"), ("", "namespaces"), ("core.kcp.io", "logicalclusters"))
        ]
        for team in self.teams:
            await kcp.call(
                "POST",
                "/clusters/root:org/apis/tenancy.kcp.io/v1alpha1/workspaces",
                {"metadata": {"name": team.rsplit(":", 1)[1]}},
            )
            binding = {
                "reference": {"export": {"path": "root:org", "name": EXPORT}},
                "permissionClaims": claims,
            }
            await kcp.call(
                "POST",
                f"/clusters/{team}/{APIS}/apibindings",
                {"metadata": {"name": EXPORT}, "spec": binding},
            )
            self.clusters.append(await logical_cluster(kcp, team))
        config = yaml.safe_load((stack.work / "kcp" / "kc").read_text())
        for cluster in config["clusters"]:
            cluster["cluster"]["server"] = f"{kcp.url}/clusters/root:org"
        (stack.work / "kcp-org.kc").write_text(yaml.safe_dump(config))
        service_kc = str(stack.work / "service" / "kc")
        apply_crds(stack, Path(service_kc), "publish")
        await service.call("POST", "/api/v1/namespaces", {"metadata": {"name": STATE_NAMESPACE}})
        await service.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", local_crd())
        await service.call(
            "POST",
            "/apis/syncagent.kcp.io/v1alpha1/publishedresources",
            {
                "apiVersion": "syncagent.kcp.io/v1alpha1",
                "kind": "PublishedResource",
                "metadata": {"name": RULE},
                "spec": {"resource": {"apiGroup": GROUP, "kind": KIND}},
            },
        )
        stack.env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "SYNCFLOW_REDIS_URL": self.queue.url,
            "SYNCFLOW_AGENT_NAME": stack.agent,
            "SYNCFLOW_KUBECONFIG": service_kc,
            "SYNCFLOW_KCP_KUBECONFIG": str(stack.work / "kcp-org.kc"),
            "SYNCFLOW_APIEXPORTENDPOINTSLICE_REF": EXPORT,
            "SYNCFLOW_NAMESPACE": STATE_NAMESPACE,
            "SYNCFLOW_RESYNC_PERIOD": "3600",
            **({"SYNCFLOW_BROKER_URL": self.broker_url} if self.broker_url else {}),
            **(
                {"SYNCFLOW_ENDPOINT_QPS": str(self.qps), "SYNCFLOW_ENDPOINT_BURST": str(round(2 * self.qps))}
                if self.qps
                else {}
            ),
        }
        stack.start("watch", "watch")
        stack.start("beat", "beat", "-s", str(stack.work / "beat-schedule"))
        for n in range(1, workers + 1):
            self.start_worker(n)
        for team in self.teams:
            path = f"/clusters/{team}/apis/{GROUP}/v1/namespaces/default/{PLURAL}"
            await stack.wait(
                lambda path=path: served(kcp, path), 60, f"{PLURAL}.{GROUP} served in {team}", every=0.2
            )
        # objects created before the rule's watches listed would reach the queue as a relist, not as
        # events: measure the event path, which is what a running agent sees
        await stack.wait(self._rule_watched, 60, "the rule's source and target watches listed", every=0.1)
        # syncflow's start ends with a resync and a status pass (beat's first tick, 15 s in), each
        # listing both sides once: run them here, not in the middle of the measured run, which the
        # baseline's fresh stack has no such pass in
        await stack.wait(self._started, 60, "the first resync and status passes", every=0.2)
        await self.queue.idle(self.stack)

    async def _rule_watched(self) -> bool | None:
        log = (self.stack.work / "watch.log").read_text(errors="replace")
        listed = [line for line in log.splitlines() if "watch.listed" in line]
        sides = ("watch=source:", "watch=target:")
        return True if all(any(side in line for line in listed) for side in sides) else None

    async def _started(self) -> bool | None:
        logs = "".join(log.read_text(errors="replace") for log in self.stack.work.glob("worker-*.log"))
        passes = (f"resync.done rule={RULE} kind={kind} " for kind in ("resync", "status"))
        return True if all(line in logs for line in passes) else None

    async def _export_path(self) -> str:
        """The path of the APIExport's virtual workspace, as its endpoint slice publishes it."""
        _, endpoint_slice = await self.kcp.call(
            "GET", f"/clusters/root:org/{APIS}/apiexportendpointslices/{EXPORT}"
        )
        url = str(endpoint_slice["status"]["endpoints"][0]["url"])
        return url.removeprefix(self.kcp.url)

    def start_worker(self, n: int, ready: bool = True) -> None:
        """Start worker ``n`` (``-c <concurrency>``) and, with ``ready``, wait until Celery reports it
        ready."""
        name = f"worker-{n}"
        self.stack.start(
            name,
            "worker",
            "-c",
            str(self.concurrency),
            "-n",
            f"w{n}-{self.stack.agent}@%h",
            "-I",
            "syncflow.modes.publish.tasks",
        )
        if ready:
            self.stack.wait_sync(said(self.stack.work / f"{name}.log", " ready."), 30, f"{name} ready")

    async def create_all(
        self,
        names: list[str],
        run: str,
        per_object: Callable[[str, int], Awaitable[None]] | None = None,
        clients: int = 8,
        rate: float = 0,
    ) -> dict[str, float]:
        """Create ``names`` in kcp (round-robin over workspaces) with ``clients`` concurrent clients,
        the ``i``-th not before ``i / rate`` seconds in when ``rate`` is set; returns create times."""
        created: dict[str, float] = {}

        async def create(i: int, name: str) -> None:
            team = self.teams[i % len(self.teams)]
            path = f"/clusters/{team}/apis/{GROUP}/v1/namespaces/default/{PLURAL}"
            await self.kcp.call("POST", path, widget(name, run))
            created[name] = time.perf_counter()
            if per_object is not None:
                await per_object(name, i % len(self.teams))

        await in_parallel(names, create, clients, rate)
        return created

    async def watch_copies(
        self,
        run: str,
        seen: dict[str, float],
        expected: int,
        on_new: Callable[[int], None] | None = None,
        opened: asyncio.Event | None = None,
    ) -> None:
        """Record when each local copy of run ``run`` first appears (raw watch stream); ``opened``:
        see ``watch_first_seen``."""
        await watch_first_seen(
            self.session,
            self.service,
            f"/apis/{GROUP}/v1/{PLURAL}",
            f"bench-run%3D{run}",
            lambda obj: str(obj["metadata"]["annotations"]["syncagent.kcp.io/remote-object-name"]),
            seen,
            expected,
            timeout=max(1, int(self.stack.remaining(3600))),
            on_new=on_new,
            opened=opened,
        )

    async def count_copies(self, run: str) -> int:
        """Local copies of run ``run`` in a list of the service cluster."""
        _, listed = await self.service.call(
            "GET", f"/apis/{GROUP}/v1/{PLURAL}?labelSelector=bench-run%3D{run}"
        )
        return len(listed["items"])

    async def sync_run(self, run: str, objects: int, timeout: float) -> dict[str, Any]:
        """Create ``objects`` in kcp and time syncflow until every local copy exists."""
        self.stack.allow(timeout)
        await self.queue.idle(self.stack)
        before = await traffic([self.kcp, self.service])
        done_before = done_verbs(self.stack)
        reading = CpuReading.now(self.stack, self.queue.redis)
        seen: dict[str, float] = {}
        steps: list[tuple[float, float]] = []  # (time, service CPU seconds) at every STEP-th copy
        synced: list[Counter[str]] = []  # CPU seconds by process group at the first create and last copy

        def step(count: int) -> None:
            if count % STEP == 0:
                steps.append((time.perf_counter(), self.stack.cpu()["service"]))
            if count == objects:
                synced.append(self.stack.cpu())

        watcher = await open_watch(lambda opened: self.watch_copies(run, seen, objects, step, opened))
        names = [f"{run}-{i}" for i in range(objects)]
        synced.append(self.stack.cpu())
        steps.append((time.perf_counter(), synced[0]["service"]))
        started = time.perf_counter()
        created = await self.create_all(names, run, rate=self.create_rate)
        create_s = time.perf_counter() - started

        async def listed() -> bool:
            return await self.count_copies(run) >= objects

        await all_seen(
            self.stack, watcher, seen, objects, listed, timeout, f"{objects} local copies of run {run}"
        )
        at_complete = await traffic([self.kcp, self.service])
        window = time.perf_counter() - started
        await self.stack.wait(
            lambda: self._ready(watcher), 10, f"the watch to see every copy (seen {len(seen)})", 0.05
        )
        cpu = self.stack.cpu()
        cpu.subtract(reading.groups)
        await self.queue.idle(self.stack, timeout)  # the echoes' reconciles drain at the workers' pace
        kcp, service = (a - b for a, b in zip(await traffic([self.kcp, self.service]), before, strict=True))
        done = done_verbs(self.stack) - done_before
        sides = {"kcp": kcp, "service": service}
        spent = reading.spent(self.stack, self.queue.redis, objects)
        figures = sync_figures(started, created, seen, create_s, sides, done, cpu, spent)
        rates = [(now - then).total() / window for now, then in zip(at_complete, before, strict=True)]
        limits = [self.qps or self.queue.settings.endpoint_limit(e).qps for e in (KCP, SERVICE)]
        figures["qps"] = dict(zip((KCP, SERVICE), zip(rates, limits, strict=True), strict=True))
        figures["steps"] = [
            (STEP / (t1 - t0), (c1 - c0) / STEP * 1000) for (t0, c0), (t1, c1) in pairwise(steps)
        ]
        # from the first create to the last copy: without the benchmark's watch and list of the run's copies
        window_cpu = synced[1] - synced[0]
        figures["window_ms"] = {
            "service": window_cpu["service"] / objects * 1000,
            "syncflow": sum(window_cpu[group] for group in SYNCFLOW_GROUPS) / objects * 1000,
        }
        return figures

    async def steady_run(self, run: str, objects: int, rate: float, timeout: float) -> dict[str, float]:
        """The steady phase (``bench.steady.copy_latency``): ``objects`` created at ``rate`` per second,
        create → local copy on the same raw watch as ``sync_run``'s."""
        self.stack.allow(timeout)
        await self.queue.idle(self.stack)

        async def watch(seen: dict[str, float]) -> list[asyncio.Task[None]]:
            return [await open_watch(lambda opened: self.watch_copies(run, seen, objects, opened=opened))]

        async def create(rate: float) -> dict[str, float]:
            return await self.create_all([f"{run}-{i}" for i in range(objects)], run, rate=rate)

        return await copy_latency(self.stack, watch, create, rate, timeout)

    async def batch_runs(
        self, run: str, first: dict[str, Any], objects: int, batches: int, timeout: float
    ) -> None:
        """The flat-cost check: ``batches - 1`` more sync runs of ``objects`` on this stack after
        ``first``, each landing on every copy the earlier ones made; ``first["batches"]`` gets each
        run's objects/s, service API server and syncflow CPU ms per object (first create to last
        copy) and API requests per object."""
        figures = [first] + [
            await self.sync_run(f"{run}b{k}", objects, timeout) for k in range(2, batches + 1)
        ]
        first["batches"] = [
            (f["rate"], f["window_ms"]["service"], f["window_ms"]["syncflow"], f["kcp"] + f["service"])
            for f in figures
        ]

    async def count_roundtrips(self, run: str, objects: int, timeout: float) -> None:
        """``sync_run`` of ``objects`` more under MONITOR, as round-trip window ``run``."""
        assert self.roundtrips is not None, "this bench counts no round trips"
        with self.roundtrips.counting(run):
            await self.sync_run(run, objects, timeout)

    @staticmethod
    async def _ready(task: asyncio.Task[None]) -> bool | None:
        if task.done():
            task.result()
            return True
        return None

    async def backlog_run(self, ghosts: int) -> dict[str, float]:
        """Queue ``ghosts`` bulk-lane sync keys of missing objects, then time one new object's sync."""
        await self.queue.idle(self.stack)
        keys = [ObjectKey("sync", RULE, self.clusters[0], "default", f"ghost-{i}") for i in range(ghosts)]
        started = time.perf_counter()
        sent = self.queue.service.add_many(keys, bulk=True)
        enqueue_s = time.perf_counter() - started
        seen: dict[str, float] = {}
        watcher = await open_watch(lambda opened: self.watch_copies("fresh", seen, 1, opened=opened))
        created = await self.create_all(["fresh-0"], "fresh")
        await self.stack.wait(lambda: self._ready(watcher), 60, "the new object's local copy", 0.01)
        latency = seen["fresh-0"] - created["fresh-0"]
        bulk_queued = self.queue.service.broker_backlog()["sync-bulk"]
        pending = sum(s.pending for s in self.queue.service.stats() if s.queue == "sync")
        return {
            "sent": sent,
            "enqueue_s": enqueue_s,
            "latency": latency,
            "bulk_queued": bulk_queued,
            "pending": pending,
        }

    async def baseline(
        self, objects: int, clients: int = 8, observed: bool = True, lean: bool = False
    ) -> dict[str, Any]:
        """The writes the sync semantics need, done directly by ``clients`` concurrent clients: kcp
        create, the finalizer patch in kcp, namespace create once per namespace, local create,
        state-Secret create. ``observed``: timed like a syncflow run, by the same raw watch of the
        local copies (which costs both API server and this process CPU); else by the write responses.
        The bodies and paths are syncflow's (``bench.copies``); ``lean``: the smaller bodies and the
        direct kcp path of the benchmark before issue 16's ninth round."""
        export = "" if lean else await self._export_path()
        writes = CopyWrites(self.stack.agent, export, f"apis/{GROUP}/v1/namespaces/default/{PLURAL}")
        namespaces: dict[str, asyncio.Lock] = {c: asyncio.Lock() for c in self.clusters}
        made: set[str] = set()
        before = (await self.kcp.counts()).total() + (await self.service.counts()).total()
        latencies: list[float] = []
        created_at: dict[str, float] = {}
        seen: dict[str, float] = {}
        watcher = (
            await open_watch(lambda opened: self.watch_copies(BASE_COPY, seen, objects, opened=opened))
            if observed
            else None
        )

        async def copy(name: str, team: int) -> None:
            namespace = f"base-{self.clusters[team]}"
            async with namespaces[self.clusters[team]]:
                if namespace not in made:
                    await self.service.call(
                        "POST", "/api/v1/namespaces", {"metadata": {"name": namespace}}, (409,)
                    )
                    made.add(namespace)
            cluster = self.clusters[team]
            kcp_path = writes.kcp_path(self.teams[team], cluster, name)
            await self.kcp.call(
                "PATCH",
                kcp_path,
                {"metadata": {"finalizers": ["syncagent.kcp.io/cleanup"]}},
                content_type="application/merge-patch+json",
            )
            bodies = writes.lean_bodies if lean else writes.bodies
            copy, secret = bodies(cluster, widget(name, "base"), widget(name, BASE_COPY))
            await self.service.call("POST", f"/apis/{GROUP}/v1/namespaces/{namespace}/{PLURAL}", copy)
            await self.service.call("POST", f"/api/v1/namespaces/{STATE_NAMESPACE}/secrets", secret)
            latencies.append((time.perf_counter() - created_at[name]) * 1000)

        async def timed(name: str, team: int) -> None:
            created_at[name] = time.perf_counter()
            await copy(name, team)

        cpu_before, busy = self.stack.cpu(), machine_cpu()
        started = time.perf_counter()
        created = await self.create_all([f"base-{i}" for i in range(objects)], "base", timed, clients)
        if watcher is not None:
            await self.stack.wait(
                lambda: self._ready(watcher), 60, f"the watch to see every copy (seen {len(seen)})", 0.05
            )
            latencies = [(seen[name] - at) * 1000 for name, at in created.items()]
        elapsed = (max(seen.values()) if seen else time.perf_counter()) - started
        cpu = self.stack.cpu()
        cpu.subtract(cpu_before)
        # the user's kcp creates are not syncflow's work: left out, as in the syncflow run
        calls = (await self.kcp.counts()).total() + (await self.service.counts()).total() - before - objects
        return {
            "rate": objects / elapsed,
            "elapsed": elapsed,
            "middle": middle_rate(seen, started) if seen else None,
            "p50": percentile(latencies, 50),
            "p99": percentile(latencies, 99),
            "observed": observed,
            "lean": lean,
            "calls": calls / objects,
            "cpu": cpu_summary(cpu, elapsed, objects),
            "cpu_ms": cpu_ms(busy, objects),
        }


def counted(args: argparse.Namespace) -> int:
    """Objects of the run that counts Redis round trips."""
    return min(int(args.count_objects), int(args.objects))


def at_least(lowest: float, kind: Callable[[str], N]) -> Callable[[str], N]:
    """An argparse type: ``kind`` of the text, refused below ``lowest``."""

    def parse(text: str) -> N:
        value = kind(text)
        if value < lowest:
            raise argparse.ArgumentTypeError(f"{value} is below {lowest:g}")
        return value

    return parse


async def one_stack(
    session: aiohttp.ClientSession,
    redis: RoundTrips | str,
    work: Path,
    args: argparse.Namespace,
    scenario: Callable[[Bench], Awaitable[T]],
    workers: int = 1,
) -> T:
    """Run ``scenario`` on a fresh stack (devclusters, syncflow with ``workers`` processes), then stop it;
    ``redis``: the run's Redis, its round trips counted, or only its URL."""
    work.mkdir()
    stack = Stack(work, f"bench{uuid.uuid4().hex[:8]}", args.budget)
    url, roundtrips = (redis, None) if isinstance(redis, str) else (redis.url, redis)
    bench = Bench(
        stack,
        session,
        args.workspaces,
        url,
        roundtrips=roundtrips,
        concurrency=args.concurrency,
        broker_url=args.broker_url,
        latency=args.latency,
        qps=args.qps,
        create_rate=args.create_rate,
    )
    try:
        await bench.setup(workers)
        return await scenario(bench)
    finally:
        stack.stop_all()
        bench.queue.cleanup()
        bench.queue.close()


async def baseline_run(bench: Bench, args: argparse.Namespace, clients: int) -> dict[str, Any]:
    """With syncflow stopped, ``Bench.baseline`` with ``clients`` clients, as ``args`` ask."""
    for name in [n for n in bench.stack.processes if n not in ("kcp", "service")]:
        bench.stack.stop(name)
    return await bench.baseline(
        args.objects, clients, observed=not args.baseline_unobserved, lean=args.baseline_lean
    )


async def measure(options: RunOptions, redis_url: str) -> ModeFigures:
    """``python -m bench``'s publish figures: one sync run of ``options.objects`` with ``options.workers``
    worker processes, then its steady phase (``options.steady`` objects at half its objects/s), and the
    baseline with ``BASE_CLIENTS`` clients and with as many as ``options.workers``, each on a fresh stack,
    every other option at its default."""
    objects, workers = options.objects, options.workers
    args = parser().parse_args(["--objects", str(objects), "--latency", options.latency])
    with tempfile.TemporaryDirectory() as scratch:
        root = run_dir("publish-", options.logs, scratch)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as session:

            async def synced(bench: Bench) -> tuple[dict[str, Any], MemoryFigures, dict[str, float]]:
                memory = Memory(bench.stack, bench.queue.redis)
                figures = await bench.sync_run("sync", objects, args.budget)
                used = memory.end(objects, figures["half_at"])
                steady = (
                    await bench.steady_run(
                        "steady", options.steady, steady_rate(figures["rate"]), args.budget
                    )
                    if options.steady
                    else {}
                )
                return figures, used, steady

            def fair(clients: int) -> Callable[[Bench], Awaitable[dict[str, Any]]]:
                return functools.partial(baseline_run, args=args, clients=clients)

            r, memory, steady = await one_stack(session, redis_url, root / "sync", args, synced, workers)
            base = same = None
            if options.baseline:  # each on a fresh stack
                base = await one_stack(session, redis_url, root / "base", args, fair(BASE_CLIENTS))
                same = workers, await one_stack(session, redis_url, root / "base-same", args, fair(workers))
    work = f"{objects} objects in {args.workspaces} kcp workspaces -> service cluster,"
    work += f" {workers} worker processes" + latency_note(options.latency)
    return mode_figures("publish", work, BASELINE, r, ("kcp", "service"), base, memory, steady, same)


Round = tuple[dict[int, dict[str, Any]], dict[str, float], dict[int, dict[str, Any]]]
"""One round's syncflow runs by worker count, its backlog run, and its baselines by client count."""


async def one_round(
    session: aiohttp.ClientSession, redis: RoundTrips, work: Path, k: int, args: argparse.Namespace
) -> Round:
    """Every worker count on its own fresh stack, then every baseline on another."""
    work.mkdir()
    runs: dict[int, dict[str, Any]] = {}
    backlog: dict[str, float] = {}
    bases: dict[int, dict[str, Any]] = {}
    for n in args.workers:
        load = HostReading.now()

        async def measure(bench: Bench, n: int = n) -> dict[str, Any]:
            figures = await bench.sync_run(f"w{n}", args.objects, args.budget)
            if args.batches > 1:
                await bench.batch_runs(f"w{n}", figures, args.objects, args.batches, args.budget)
            await bench.count_roundtrips(f"r{k}w{n}{COUNTED}", counted(args), args.budget)
            if n == args.workers[-1] and args.backlog:
                backlog.update(await bench.backlog_run(args.backlog))
            return figures

        runs[n] = await one_stack(session, redis, work / f"w{n}", args, measure, n)
        runs[n]["load"] = load_average(load)
    for clients in args.baseline_clients:
        load = HostReading.now()
        baseline = functools.partial(baseline_run, args=args, clients=clients)
        bases[clients] = await one_stack(session, redis, work / f"base{clients}", args, baseline)
        bases[clients]["load"] = load_average(load)
    return runs, backlog, bases


async def run(args: argparse.Namespace) -> None:
    """``--rounds`` rounds, Redis round trips counted; each round's figures, then the ratios by round."""
    with tempfile.TemporaryDirectory() as scratch:
        root = run_dir("e2e-", args.logs, scratch)
        began = time.perf_counter()
        with private_redis(root) as url:
            redis = RoundTrips(url, root / "monitor.log")
            rounds: list[Round] = []
            try:
                async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as session:
                    for k in range(1, args.rounds + 1):
                        runs, backlog, bases = await one_round(session, redis, root / f"round{k}", k, args)
                        windows = redis.windows()
                        for n, r in runs.items():
                            r["redis"] = windows[f"r{k}w{n}{COUNTED}"]
                        if args.rounds > 1:
                            print(f"round {k} of {args.rounds}")
                        # printed now: a later round's failure cannot lose it
                        report(args, runs, backlog, bases)
                        rounds.append((runs, backlog, bases))
            finally:
                redis.close()
    if args.rounds > 1:
        print(ratios_by_round(rounds, args.concurrency))
        if len(args.workers) > 1:
            print(scaling_by_round(rounds))
        if args.batches > 1:
            print(flat_cost_by_round(rounds, args.objects))
    print(f"total run {time.perf_counter() - began:.0f} s")


def ratios_by_round(rounds: list[Round], concurrency: int) -> str:
    """Each worker count's ratio to the same round's baseline with as many clients as pool processes
    (else the one ``report`` compares with), and the median: a VM whose speed drifts between runs
    moves one round's ratio, not the median."""
    lines = ["ratio to the same round's baseline, by round"]
    for n in rounds[0][0]:
        slots = n * concurrency
        clients = slots if slots in rounds[0][2] else ratio_clients(rounds[0][2])
        ratios = [runs[n]["rate"] / bases[clients]["rate"] for runs, _, bases in rounds]
        listed = ", ".join(f"{ratio:.3f}" for ratio in ratios)
        lines.append(
            f"  {n} worker process(es) against {clients} client(s): {listed};"
            f" median {statistics.median(ratios):.3f}"
        )
    return "\n".join(lines)


def scaling_by_round(rounds: list[Round]) -> str:
    """Each doubling's growth of objects/s, whole run and middle 80 %, round by round, and the median."""
    lines = ["scale-out by round: objects/s over the previous worker count (whole run; middle 80 %)"]
    counts = list(rounds[0][0])
    for before, after in pairwise(counts):
        whole = [runs[after]["rate"] / runs[before]["rate"] for runs, _, _ in rounds]
        middle = [runs[after]["middle"][0] / runs[before]["middle"][0] for runs, _, _ in rounds]
        lines.append(
            f"  {before} -> {after}: "
            + ", ".join(f"x{w:.2f} (x{m:.2f})" for w, m in zip(whole, middle, strict=True))
            + f"; median x{statistics.median(whole):.2f} (x{statistics.median(middle):.2f})"
        )
    return "\n".join(lines)


def flat_cost_by_round(rounds: list[Round], objects: int) -> str:
    """``flat_cost`` of each figure's median over the rounds, run by run: a stretch in which the VM
    is slow falls on different runs in different rounds, while a cost that grows with the stack's
    size falls on the same ones."""
    lines = ["flat cost, each figure the median over the rounds"]
    for n in rounds[0][0]:
        by_run = zip(*(runs[n]["batches"] for runs, _, _ in rounds), strict=True)
        medians = [
            tuple(statistics.median(column) for column in zip(*same_run, strict=True)) for same_run in by_run
        ]
        lines += [f"  {n} worker process(es):", *flat_cost(medians, objects)]
    return "\n".join(lines)


def ratio_clients(bases: dict[int, dict[str, Any]]) -> int:
    """The baseline the report's ratios use: 8 clients, else the most measured."""
    return 8 if 8 in bases else max(bases)


FLAT_COLUMNS = ("obj/s", "service CPU", "syncflow CPU", "requests")
"""The figures of each run in ``Bench.batch_runs``, in order."""


def flat_cost(batches: list[tuple[float, float, float, float]], objects: int) -> list[str]:
    """Report lines of ``Bench.batch_runs``: each run's figures, then how far apart the 1st, 5th, 10th
    (those there are) and last are, as the lowest's share of the highest."""
    lines = [f"  flat cost: {len(batches)} runs of {objects} objects one after another on this stack"]
    lines += [
        f"    run {k:2d} (copies {(k - 1) * objects + 1}-{k * objects}): {rate:6.1f} obj/s  CPU ms/object"
        f" service API server {service:5.2f}, syncflow {syncflow:5.2f}  requests/object {requests:.2f}"
        for k, (rate, service, syncflow, requests) in enumerate(batches, 1)
    ]
    compared = sorted({k for k in (1, 5, 10) if k <= len(batches)} | {len(batches)})
    picked = [batches[k - 1] for k in compared]
    spreads = ", ".join(
        f"{name} {min(column) / max(column):.3f}"
        for name, column in zip(FLAT_COLUMNS, zip(*picked, strict=True), strict=True)
    )
    runs = ", ".join(f"#{k}" for k in compared)
    lines.append(f"    runs {runs}, lowest/highest (within 15 %: >= 0.85): {spreads}")
    return lines


def middle_line(middle: tuple[float, float, float]) -> str:
    """The line of a run's pace from its 10th to its 90th percentile copy."""
    rate, first, last = middle
    return f"  middle 80 %       {rate:8.1f} obj/s  (copies seen {first:.1f} s to {last:.1f} s in)"


def report(
    args: argparse.Namespace,
    runs: dict[int, dict[str, Any]],
    backlog: dict[str, float],
    bases: dict[int, dict[str, Any]],
) -> None:
    """Print the figures, then the table; ratios are to the baseline with 8 clients (or the most)."""
    objects = args.objects
    base = bases[ratio_clients(bases)]
    paced = f", paced at {args.create_rate:g}/s" if args.create_rate else ""
    lines = [
        f"{objects} objects over {args.workspaces} workspaces, 8 clients, a fresh stack per run,"
        f" devcluster --latency {args.latency}"
    ]
    for n, r in runs.items():
        redis: Counter[str] = r["redis"]
        lines += [
            f"syncflow, {n} worker process(es) (-c {args.concurrency} each)  [{r['load']}]:",
            f"  throughput        {r['rate']:8.1f} obj/s  ({r['elapsed']:.1f} s; creates alone"
            f" {r['create_s']:.1f} s{paced})  ratio syncflow/baseline {r['rate'] / base['rate']:.3f}",
            middle_line(r["middle"]),
            f"  latency           p50 {r['p50']:.0f} ms  p99 {r['p99']:.0f} ms"
            "  (create response -> ADDED on a local watch)",
            f"  reconciles/object {r['sync']:8.2f} sync  {r['status']:.2f} status"
            "  (task.done lines in the worker logs)",
            f"  API requests/obj  {r['kcp'] + r['service']:8.2f}  (kcp {r['kcp']:.2f},"
            f" service {r['service']:.2f}; /debug/requests delta minus the benchmark's own)",
            f"    by method: {r['methods']}",
            "  request rate      "
            + "  ".join(f"{side} {rate:.1f}/s (budget {qps:.0f})" for side, (rate, qps) in r["qps"].items())
            + "  (per endpoint, first create -> last copy)",
            f"  Redis round trips/obj {redis.total() / counted(args):.2f}  (MONITOR: every process but this"
            f" one, in a second run of {counted(args)} objects; MONITOR would slow the timed run)",
            "    by command: "
            + " ".join(
                f"{c} {k / counted(args):.2f}" for c, k in redis.most_common() if k / counted(args) >= 0.01
            ),
            f"  CPU seconds       {r['cpu']}",
            *(
                f"  copies {k * STEP + 1}-{(k + 1) * STEP}: {rate:7.1f} obj/s"
                f"  service devcluster CPU {cpu_ms:5.2f} ms/object"
                for k, (rate, cpu_ms) in enumerate(r["steps"])
            ),
        ]
        if "batches" in r:
            lines += flat_cost(r["batches"], objects)
    for clients, b in bases.items():
        lines += [
            "baseline, the writes done directly (kcp create, finalizer patch, namespace once, local create,"
            f" state Secret), this process, {clients} clients  [{b['load']}]:",
            f"  throughput        {b['rate']:8.1f} obj/s  ({b['elapsed']:.1f} s)",
            *([middle_line(b["middle"])] if b["middle"] else []),
            f"  latency           p50 {b['p50']:.0f} ms  p99 {b['p99']:.0f} ms"
            + (
                "  (create response -> ADDED on a local watch, as syncflow's)"
                if b["observed"]
                else "  (kcp create response -> local create response; unobserved)"
            ),
            f"  API requests/obj  {b['calls']:8.2f}",
            "  writes            "
            + (
                "lean: finalizer patch to the team workspace, 4-byte state Secret (--baseline-lean)"
                if b["lean"]
                else "syncflow's: finalizer patch through the virtual workspace, its copy and Secret bodies"
            ),
            f"  CPU seconds       {b['cpu']}",
        ]
    if backlog:
        lines += [
            f"new object behind a {args.backlog}-key bulk backlog ({args.workers[-1]} workers;"
            f" {int(backlog['sent'])} keys queued in {backlog['enqueue_s']:.1f} s, several to a message):",
            f"  create -> local copy {backlog['latency'] * 1000:.0f} ms; still queued at that moment:"
            f" {int(backlog['bulk_queued'])} sync-bulk messages, {int(backlog['pending'])} pending sync keys",
        ]
    lines += [
        "",
        "workers  obj/s  ratio  requests/obj  redis RT/obj  sync/obj  status/obj",
        *(
            f"{n:7d} {r['rate']:6.1f} {r['rate'] / base['rate']:6.3f} {r['kcp'] + r['service']:13.2f}"
            f" {r['redis'].total() / counted(args):13.2f} {r['sync']:9.2f} {r['status']:11.2f}"
            for n, r in runs.items()
        ),
    ]
    if len(bases) > 1:
        lines += [
            "",
            "scale-out: syncflow by worker processes, the baseline by clients; a baseline with as many"
            " clients as syncflow has pool processes is that concurrency's ceiling",
            "workers  slots  obj/s  x prev  middle 80 %  x prev  baseline with as many clients  ratio",
        ]
        previous: dict[str, Any] | None = None
        for n, r in runs.items():
            slots = n * args.concurrency
            growth = f"x{r['rate'] / previous['rate']:.2f}" if previous else ""
            middle_growth = f"x{r['middle'][0] / previous['middle'][0]:.2f}" if previous else ""
            same = bases.get(slots)
            ceiling = f"{same['rate']:29.1f}  {r['rate'] / same['rate']:5.3f}" if same else ""
            lines.append(
                f"{n:7d} {slots:6d} {r['rate']:6.1f} {growth:>7s} {r['middle'][0]:11.1f}"
                f" {middle_growth:>7s} {ceiling}"
            )
            previous = r
        rates = list(bases.items())
        lines.append(
            "baseline by clients: "
            + ", ".join(
                f"{k}: {b['rate']:.1f}"
                + (f" (x{b['rate'] / rates[i - 1][1]['rate']:.2f})" if i else "")
                + (f", middle 80 % {b['middle'][0]:.1f}" if b["middle"] else "")
                + (
                    f" (x{b['middle'][0] / rates[i - 1][1]['middle'][0]:.2f})"
                    if i and b["middle"] and rates[i - 1][1]["middle"]
                    else ""
                )
                for i, (k, b) in enumerate(rates)
            )
        )
    print("\n".join(lines))


def parser() -> argparse.ArgumentParser:
    """This bench's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=1_000, help="objects per run")
    parser.add_argument(
        "--rounds",
        type=at_least(1, int),
        default=1,
        help="repeat every run this many times, each round's baselines right after its syncflow runs,"
        " and print each ratio and their median (a VM's speed drifts between runs)",
    )
    parser.add_argument(
        "--count-objects",
        type=at_least(1, int),
        default=1_000,
        help="objects of the second, monitored run that counts Redis round trips (at most --objects)",
    )
    parser.add_argument(
        "--batches",
        type=at_least(1, int),
        default=1,
        help="the flat-cost check: this many sync runs of --objects one after another on each syncflow"
        " stack (each creating its objects as the first does), objects/s and service CPU per object of"
        " each, and how far the 1st, 5th and 10th are apart",
    )
    parser.add_argument("--workspaces", type=int, default=10, help="team workspaces binding the export")
    parser.add_argument(
        "--backlog", type=int, default=10_000, help="bulk-lane keys queued before the new object"
    )
    parser.add_argument(
        "--workers",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2, 4],
        help="worker process counts, comma-separated (each on a fresh stack)",
    )
    parser.add_argument("--concurrency", type=int, default=1, help="worker -c (child processes per worker)")
    parser.add_argument(
        "--budget",
        type=float,
        default=290,
        help="seconds a stack's set-up and first run may take, and each later run on it",
    )
    parser.add_argument(
        "--latency", default="0", help="devcluster --latency of both API servers (e.g. 20ms: a remote RTT)"
    )
    parser.add_argument(
        "--create-rate",
        type=at_least(0, float),
        default=0,
        help="kcp creates per second in a syncflow run (default 0: as fast as 8 clients go); just above the"
        " sync rate it spreads the creates' load over the run instead of its first seconds; below it,"
        " the run measures the pacing (the baseline is never paced)",
    )
    parser.add_argument(
        "--qps", type=float, help="request budget per endpoint, burst twice that (default: syncflow's, 200)"
    )
    parser.add_argument(
        "--baseline-clients",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[8],
        help="baseline client counts, comma-separated (each on a fresh stack; ratios use 8)",
    )
    parser.add_argument(
        "--baseline-unobserved",
        action="store_true",
        help="time the baseline by its write responses, without the watch of the local copies that"
        " times syncflow's runs and costs CPU (as before issue 16's eighth round; unfair to syncflow)",
    )
    parser.add_argument(
        "--baseline-lean",
        action="store_true",
        help="give the baseline the benchmark's writes before issue 16's ninth round: the finalizer patch"
        " straight to the team workspace, not through the virtual workspace as syncflow's, and a copy and"
        " state Secret smaller than syncflow's (unfair to syncflow)",
    )
    parser.add_argument("--logs", help="keep the process logs in a new directory under this one")
    parser.add_argument(
        "--broker-url", help="Celery broker (default: the private Redis), e.g. amqp://…/<vhost>"
    )
    return parser


if __name__ == "__main__":
    asyncio.run(run(parser().parse_args()))
