"""What the end-to-end benchmarks share besides ``bench.e2e``'s Stack and Api: the agent's work queue
(busy, idle, cleanup), the task counts in its worker logs, first appearances on a watch, kcp set-up,
a mode's processes and their environment, parallel clients, the load, the memory a run takes."""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import aiohttp
import orjson
import yaml
from redis import Redis

from bench.figures import MemoryFigures, per_10k, percentile
from bench.steady import last_copy_bound, schedule
from syncflow.config import load_settings
from syncflow.queue.layout import forget_agent
from syncflow.queue.service import QueueService
from syncflow.runtime.redis import provide as provide_redis
from syncflow.runtime.stack import Stack as DemoStack
from syncflow.tasks import CeleryPublisher, create_app

if TYPE_CHECKING:
    from bench.e2e import Api, Stack

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[1]
REDIS_URL = "redis://127.0.0.1:6379/0"
BENCH_CLIENT = "bench"
"""The Redis client name of the benchmark's own connections (not counted as syncflow's round trips)."""
T = TypeVar("T")


class AgentQueue:
    """The work queue of one benchmark agent in the shared Redis."""

    def __init__(self, agent: str, redis_url: str = REDIS_URL, broker_url: str | None = None) -> None:
        settings = load_settings(agent_name=agent, redis_url=redis_url, broker_url=broker_url)
        self.agent, self.url, self.settings = agent, redis_url, settings
        self.redis = Redis.from_url(
            redis_url, client_name=BENCH_CLIENT, socket_timeout=30, socket_connect_timeout=10
        )
        self.service = QueueService(self.redis, settings, CeleryPublisher(create_app(settings)))

    def busy(self) -> int:
        """Keys queued, leased or delayed, plus broker messages, over every keyed queue."""
        keyed = sum(s.dirty + s.pending + s.leased + s.delayed for s in self.service.stats())
        return keyed + sum(self.service.broker_backlog().values())

    async def idle(self, stack: Stack, timeout: float = 30) -> None:
        """Wait until the queue is idle on two checks 0.3 s apart."""
        streak = 0

        async def check() -> bool | None:
            nonlocal streak
            streak = streak + 1 if self.busy() == 0 else 0
            return True if streak >= 2 else None

        await stack.wait(check, timeout, f"an idle queue (busy: {self.busy()})", every=0.3)

    def cleanup(self) -> int:
        """Delete the agent's keys; never FLUSHALL."""
        return forget_agent(self.redis, self.agent)

    def close(self) -> None:
        """Close the Redis connection."""
        self.redis.close()


def done_verbs(stack: Stack) -> Counter[str]:
    """How many ``task.done`` lines each verb (``sync``, ``status``, …) has in the worker logs."""
    return Counter(
        m.group(1) for line in stack.log_lines("worker") if (m := re.search(r"task\.done key=(\w+)/", line))
    )


async def watch_events(
    session: aiohttp.ClientSession,
    api: Api,
    path: str,
    selector: str,
    on_event: Callable[[str, dict[str, Any]], bool | None],
    *,
    timeout: int = 290,
    opened: asyncio.Event | None = None,
) -> None:
    """List ``path``'s objects matching ``selector`` (a label selector, URL-encoded) and watch them from
    that list's resourceVersion on a raw stream, calling ``on_event(type, object)`` for every event until
    it returns True or the watch ends after ``timeout`` seconds. ``opened`` is set once the stream
    answers: an object created from then on is seen."""
    _, listed = await api.call("GET", f"{path}?labelSelector={selector}")
    rv = listed["metadata"]["resourceVersion"]
    api.mine["GET"] += 1
    url = f"{api.url}{path}?watch=1&labelSelector={selector}&resourceVersion={rv}&timeoutSeconds={timeout}"
    async with session.get(url) as response:
        if opened is not None:
            opened.set()
        async for line in response.content:
            event = orjson.loads(line)
            if on_event(event["type"], event["object"]):
                return


def object_name(obj: dict[str, Any]) -> str:
    """An object's name (how the benchmarks name what they watch for)."""
    return str(obj["metadata"]["name"])


async def watch_first_seen(
    session: aiohttp.ClientSession,
    api: Api,
    path: str,
    selector: str,
    name_of: Callable[[dict[str, Any]], str],
    seen: dict[str, float],
    expected: int,
    *,
    timeout: int = 290,
    on_new: Callable[[int], None] | None = None,
    opened: asyncio.Event | None = None,
    shows: Callable[[dict[str, Any]], bool] | None = None,
) -> None:
    """Record in ``seen`` when each object of ``path`` matching ``selector`` first appears on a raw watch
    stream (``watch_events``), by ``name_of(object)``, until ``expected`` are seen or the watch ends after
    ``timeout`` seconds; ``on_new(len(seen))`` is called after each new one. Several watches may share
    ``seen``: each counts the objects it recorded itself towards its ``expected``. With ``shows``, an
    object counts from the first event in which ``shows(object)`` holds."""
    recorded = 0

    def first(kind: str, obj: dict[str, Any]) -> bool | None:
        nonlocal recorded
        if kind not in ("ADDED", "MODIFIED") or (shows is not None and not shows(obj)):
            return None
        name = name_of(obj)
        if name in seen:
            return None
        seen[name] = time.perf_counter()
        recorded += 1
        if on_new is not None:
            on_new(len(seen))
        return recorded >= expected

    await watch_events(session, api, path, selector, first, timeout=timeout, opened=opened)


async def open_watch(
    watch: Callable[[asyncio.Event], Coroutine[Any, Any, None]], timeout: float = 30
) -> asyncio.Task[None]:
    """Start ``watch`` as a task, handing it the event it sets once its stream is open, and return the
    task when it is (its error, if it fails first; ``TimeoutError`` after ``timeout`` seconds)."""
    opened = asyncio.Event()
    task = asyncio.create_task(watch(opened))
    waiting = asyncio.create_task(opened.wait())
    await asyncio.wait({task, waiting}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if opened.is_set():
        return task
    if task.done():
        task.result()  # the watch's own error
    task.cancel()
    raise TimeoutError(f"the watch did not open within {timeout:g} s")


async def all_seen(
    stack: Stack,
    watcher: asyncio.Task[None],
    seen: Mapping[str, float],
    expected: int,
    listed: Callable[[], Awaitable[bool | None]],
    timeout: float,
    what: str,
) -> None:
    """Wait until ``watcher`` has recorded ``expected`` objects in ``seen`` (its error, if it fails), then
    until ``listed()`` confirms them. Nothing lists the growing resource before: a poll by LIST would
    cost the API server and this process CPU that the baseline does not spend."""

    from bench.e2e import BenchError  # bench.e2e imports this module

    async def complete() -> bool | None:
        if watcher.done():
            watcher.result()
        if len(seen) < expected:
            return None
        return True if await listed() else None

    try:
        await stack.wait(complete, timeout, what, 0.1)
    except BenchError as exc:
        exc.add_note(f"the watch saw {len(seen)} of {expected}")
        raise


async def traffic(apis: Sequence[Api]) -> list[Counter[str]]:
    """Requests each server counted so far by method, minus the benchmark's own (subtract two of these)."""
    return [await api.counts() - api.mine for api in apis]


def middle_rate(seen: dict[str, float], started: float) -> tuple[float, float, float]:
    """Objects/s from the 10th to the 90th percentile copy (the run's pace without its ramp-up and
    tail), and the seconds from ``started`` to those two copies."""
    times = sorted(seen.values())
    first, last = (times[round(q * (len(times) - 1))] for q in (0.1, 0.9))
    copies = round(0.9 * (len(times) - 1)) - round(0.1 * (len(times) - 1))
    return (copies / (last - first) if last > first else 0.0), first - started, last - started


def most_overtaken(created: Mapping[str, float], seen: Mapping[str, float]) -> int:
    """The most copies of objects created later that landed before one object's copy (objects with a
    copy only): 0 when the copies land in the order their objects were created. Keys run a few at a
    time per process, so a few dozen is ordinary; a starved object shows as hundreds."""
    later: list[float] = []  # when the copies of the objects created after the current one landed
    most = 0
    for name in sorted(created, key=created.__getitem__, reverse=True):
        if name in seen:
            most = max(most, bisect.bisect_left(later, seen[name]))
            bisect.insort(later, seen[name])
    return most


def sync_figures(
    started: float,
    created: dict[str, float],
    seen: dict[str, float],
    create_s: float,
    requests: dict[str, Counter[str]],
    done: Counter[str],
    cpu: Counter[str],
    spent: Mapping[str, Any],
    returned: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The figures of a sync run: objects created at ``created`` times, copies seen at ``seen`` times,
    ``requests`` per side during the run, the ``done`` task verbs, the ``cpu`` seconds it took by process
    group and the CPU per object until its work was done (``spent``: ``CpuReading.spent``'s); the
    last copy's seconds after ``started`` and the bound it should be within (``last_copy_bound``).
    With ``returned`` (when each object's status came back upstream), the run lasts until the last
    status is back too, as the baseline's writes include it."""
    objects = len(created)
    last_copy = max(seen.values()) - started
    last_status = max(returned.values()) - started if returned else None
    elapsed = last_copy if last_status is None else max(last_copy, last_status)
    latencies = [(seen[name] - at) * 1000 for name, at in created.items()]
    middle = middle_rate(seen, started)
    return {
        "rate": objects / elapsed,
        "half_at": percentile(list(seen.values()), 50),  # when half the copies had landed
        "elapsed": elapsed,
        "middle": middle,
        "last_s": last_copy,
        "returned_s": last_status,
        "bound_s": last_copy_bound(objects, middle[0]),
        "overtaken": most_overtaken(created, seen),
        "create_s": create_s,
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "sync": done["sync"] / objects,
        "status": done["status"] / objects,
        **{side: calls.total() / objects for side, calls in requests.items()},
        "methods": " ".join(
            f"{side} {method} {n / objects:.2f}"
            for side, calls in requests.items()
            for method, n in sorted(calls.items())
        ),
        "cpu": cpu_summary(cpu, elapsed, objects),
        **spent,
    }


HostCpu = tuple[float, float]
"""A reading of the machine's busy and stolen CPU seconds (``host_cpu``)."""


def host_cpu() -> HostCpu:
    """The machine's busy CPU seconds (``machine_cpu``) and stolen ones (``steal_share``) so far, from
    ``/proc/stat``'s first line."""
    with open("/proc/stat", encoding="ascii") as stat:
        user, nice, system, _idle, _iowait, irq, softirq, steal = (
            int(value) for value in stat.readline().split()[1:9]
        )
    ticks = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq) / ticks, steal / ticks


def machine_cpu() -> float:
    """CPU seconds the machine's cores have spent busy so far (``/proc/stat``: user, nice, system, irq
    and softirq; guest time is within user), whichever process: subtract two readings for a run's CPU,
    its API servers', Redis's and this process's included. Time the hypervisor gave other guests while
    this machine had work (steal) is not CPU this machine spent, so it is left out (``steal_share``)."""
    return host_cpu()[0]


@dataclass(frozen=True)
class HostReading:
    """The load averages and the machine's busy and stolen CPU seconds at one moment: what a run
    prints about the host it ran on (``load_average``)."""

    load: tuple[float, float, float]
    cpu: HostCpu

    @classmethod
    def now(cls) -> HostReading:
        """A reading now."""
        return cls(os.getloadavg(), host_cpu())

    def steal_since(self) -> float:
        """``steal_share`` from this reading until now."""
        return steal_share(self.cpu)


def steal_share(before: HostCpu, after: HostCpu | None = None) -> float:
    """Percent of the CPU time this machine wanted from the ``host_cpu`` reading ``before`` to ``after``
    (default: now) that the hypervisor gave other guests: how busy the host was. CPU figures leave steal
    out; objects/s and latencies cannot, so a run with much steal is slower than its code."""
    busy, stolen = (now - then for now, then in zip(after or host_cpu(), before, strict=True))
    return 100 * stolen / (busy + stolen) if busy + stolen > 0 else 0.0


def cpu_ms(busy_since: float, objects: int) -> float:
    """Milliseconds of the machine's busy CPU per object since the ``machine_cpu`` reading ``busy_since``."""
    return 1000 * (machine_cpu() - busy_since) / objects


SYNCFLOW_GROUPS = ("worker", "watch", "beat")
"""The ``Stack.cpu`` groups that are syncflow's processes (every mode's roles)."""


@dataclass(frozen=True)
class CpuReading:
    """CPU seconds spent so far by the machine's busy cores, by each process group of a ``Stack``
    (``Stack.cpu``) and by the run's Redis server (as it reports itself)."""

    machine: float
    groups: Counter[str]
    redis: float

    @classmethod
    def now(cls, stack: Stack, redis: Redis) -> CpuReading:
        """A reading of ``stack``'s process groups and the Redis server behind ``redis``."""
        used = redis.info("cpu")
        return cls(machine_cpu(), stack.cpu(), float(used["used_cpu_sys"]) + float(used["used_cpu_user"]))

    @property
    def syncflow(self) -> float:
        """The CPU seconds of syncflow's processes (``SYNCFLOW_GROUPS``)."""
        return sum(self.groups[group] for group in SYNCFLOW_GROUPS)

    def spent(self, stack: Stack, redis: Redis, objects: int) -> dict[str, Any]:
        """``since`` this reading, until now."""
        return CpuReading.now(stack, redis).since(self, objects)

    def since(self, earlier: CpuReading, objects: int) -> dict[str, Any]:
        """Milliseconds per object from ``earlier`` to this reading: the machine's busy CPU (``cpu_ms``)
        and its parts (``cpu_parts``): syncflow's processes, Redis, and the rest (the API servers, this
        benchmark's clients and watches, processes that ended meanwhile)."""
        machine, syncflow, used = (
            self.machine - earlier.machine,
            self.syncflow - earlier.syncflow,
            self.redis - earlier.redis,
        )
        per_object = {"syncflow": syncflow, "redis": used, "rest": machine - syncflow - used}
        return {
            "cpu_ms": 1000 * machine / objects,
            "cpu_parts": {part: 1000 * seconds / objects for part, seconds in per_object.items()},
        }


def cpu_summary(cpu: Counter[str], elapsed: float, objects: int) -> str:
    """CPU seconds by process group, their total beside what 2 cores gave in ``elapsed``, and per object."""
    return (
        "  ".join(f"{name} {seconds:.1f}" for name, seconds in sorted(cpu.items()))
        + f"  (total {cpu.total():.1f} of {2 * elapsed:.1f} on 2 cores;"
        + f" {1000 * cpu.total() / objects:.2f} ms/object)"
    )


async def create_workspaces(kcp: Api, path: str) -> str:
    """Create workspace ``path`` (``root:a:b``) and its parents; returns its prefix ``/clusters/<path>``."""
    parent = "root"
    for name in path.split(":")[1:]:
        workspaces = f"/clusters/{parent}/apis/tenancy.kcp.io/v1alpha1/workspaces"
        await kcp.call("POST", workspaces, {"metadata": {"name": name}})
        parent = f"{parent}:{name}"
    return f"/clusters/{path}"


async def served(api: Api, path: str) -> bool | None:
    """True once ``path`` answers 200 (None while it answers 403 or 404): a check for ``Stack.wait``."""
    status, _ = await api.call("GET", path, ok=(403, 404))
    return True if status == 200 else None


async def logical_cluster(kcp: Api, path: str) -> str:
    """The logical-cluster name of workspace ``path`` (what sync labels and object keys name)."""
    _, lc = await kcp.call("GET", f"/clusters/{path}/apis/core.kcp.io/v1alpha1/logicalclusters/cluster")
    return str(lc["metadata"]["annotations"]["kcp.io/cluster"])


def agent_env(stack: Stack, redis_url: str, settings: Mapping[str, str]) -> dict[str, str]:
    """The environment of a run's syncflow processes: this one's, the repository importable, the run's
    Redis and agent name, then ``settings`` (``SYNCFLOW_*`` variables)."""
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "SYNCFLOW_REDIS_URL": redis_url,
        "SYNCFLOW_AGENT_NAME": stack.agent,
        **settings,
    }


def said(log: Path, text: str) -> Callable[[], bool | None]:
    """A check for ``Stack.wait_sync``: True once ``log`` holds ``text``."""
    return lambda: True if text in log.read_text(errors="replace") else None


def start_watch_and_beat(stack: Stack, mode: str) -> None:
    """Start ``syncflow <mode> --role watch`` and ``--role beat`` (its schedule under the run's work)."""
    stack.start("watch", mode, "--role", "watch")
    stack.start("beat", mode, "--role", "beat", "--data-dir", str(stack.work / "beat"))


def start_worker_role(stack: Stack, mode: str, name: str, workers: int) -> None:
    """Start ``syncflow <mode> --role worker --workers <workers>`` as process ``name``."""
    stack.start(name, mode, "--role", "worker", "--workers", str(workers))


def workspace_kubeconfig(stack: Stack, kcp: Api, path: str) -> Path:
    """A copy of the kcp devcluster's kubeconfig aimed at workspace ``path``."""
    config = yaml.safe_load((stack.work / "kcp" / "kc").read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = f"{kcp.url}/clusters/{path}"
    target = stack.work / f"{path.replace(':', '-')}.kc"
    target.write_text(yaml.safe_dump(config))
    return target


def apply_crds(stack: Stack, kubeconfig: Path, mode: str) -> None:
    """``syncflow crds --apply --mode <mode>`` with ``kubeconfig``: the CRDs that mode is configured with."""
    crds = subprocess.run(
        [str(BIN / "syncflow"), "crds", "--apply", "--mode", mode, "--kubeconfig", str(kubeconfig)],
        capture_output=True,
        text=True,
        timeout=stack.remaining(60),
        check=False,
    )
    if crds.returncode:
        raise stack.fail(f"syncflow crds --apply: {crds.stdout}{crds.stderr}")


async def in_parallel(
    items: Sequence[T], action: Callable[[int, T], Awaitable[object]], clients: int = 8, rate: float = 0
) -> None:
    """Run ``action(index, item)`` over ``items`` with ``clients`` concurrent clients, in order; with a
    ``rate``, the ``i``-th not before ``i / rate`` seconds in (``bench.steady.schedule``)."""
    pending = list(enumerate(items))[::-1]
    due = schedule(len(items), rate)
    began = time.perf_counter()

    async def client() -> None:
        while pending:
            i, item = pending.pop()
            if rate:
                await asyncio.sleep(max(0.0, began + due[i] - time.perf_counter()))
            await action(i, item)

    await asyncio.gather(*(client() for _ in range(clients)))


def load_average(before: HostReading) -> str:
    """The load averages before and now, the cores, and the share of CPU time stolen meanwhile."""
    now = os.getloadavg()
    return (
        f"load average before: {' '.join(f'{x:.2f}' for x in before.load)}"
        f"  after: {' '.join(f'{x:.2f}' for x in now)}  ({os.cpu_count()} cores);"
        f" host steal {before.steal_since():.1f} %"
    )


def run_dir(prefix: str, logs: str | None, scratch: str) -> Path:
    """Where one run keeps its processes' logs: a new directory under ``logs`` (created when missing),
    else ``scratch`` (removed after the run)."""
    if not logs:
        return Path(scratch)
    Path(logs).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=logs))


@contextlib.contextmanager
def private_redis(work: Path) -> Iterator[str]:
    """A private ``redis-server`` (no persistence) logging under ``work`` while the block runs; its URL."""
    stack = DemoStack(work)
    try:
        yield provide_redis(stack, None).url
    finally:
        stack.stop()


def process_stats() -> Iterator[list[str]]:
    """The fields of every process's ``/proc/<pid>/stat`` after its command: state, ppid, pgrp, …"""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            yield stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue


def resident(stack: Stack, prefix: str = "worker") -> int:
    """Bytes resident in the process groups of ``stack``'s processes named ``prefix…``, summed over
    their processes (a page a pool's processes share counts once in each)."""
    groups = {process.pid for name, process in stack.processes.items() if name.startswith(prefix)}
    page = os.sysconf("SC_PAGE_SIZE")
    return sum(int(fields[21]) * page for fields in process_stats() if int(fields[2]) in groups)


def sampled_at(samples: Sequence[tuple[float, int]], moment: float) -> int:
    """The value last sampled at or before ``moment`` (the first sample's if none was): ``samples`` are
    ``(time, value)`` pairs in time order."""
    return next((value for at, value in reversed(samples) if at <= moment), samples[0][1])


MEMORY_SAMPLE_S = 0.5
"""Seconds between the samples of the worker role's RSS while a run syncs."""
MEMORY_SAMPLES = 20_000
"""Samples kept at most (over two hours' worth): a longer run keeps its latest."""


class Memory:
    """The worker role's RSS and Redis ``used_memory`` when a run starts, and the RSS sampled while it
    syncs; ``end`` gives the figures. Made inside the event loop that runs the sync."""

    def __init__(self, stack: Stack, redis: Redis) -> None:
        self.stack, self.redis = stack, redis
        self.rss, self.used = resident(stack), self.used_memory()
        self.samples: deque[tuple[float, int]] = deque([(time.perf_counter(), self.rss)], MEMORY_SAMPLES)
        self._sampler = asyncio.get_running_loop().create_task(self._sample())

    async def _sample(self) -> None:
        while True:
            await asyncio.sleep(MEMORY_SAMPLE_S)
            rss = await asyncio.to_thread(resident, self.stack)
            self.samples.append((time.perf_counter(), rss))

    def used_memory(self) -> int:
        """Redis ``used_memory`` (INFO memory), in bytes."""
        return int(self.redis.info("memory")["used_memory"])

    def end(self, objects: int, half_at: float) -> MemoryFigures:
        """Worker RSS now, its growth and Redis's since the start per 10,000 of the run's ``objects``, and
        the RSS growth per 10,000 objects from ``half_at`` (when half the copies had landed) to now."""
        self._sampler.cancel()
        rss = resident(self.stack)
        return {
            "rss_mb": rss / 2**20,
            "rss_growth_mb": per_10k(rss - self.rss, objects),
            "rss_late_mb": per_10k(rss - sampled_at(self.samples, half_at), objects - objects // 2),
            "redis_mb": per_10k(self.used_memory() - self.used, objects),
        }
