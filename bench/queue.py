"""Keyed-queue benchmark: keyed no-op tasks vs plain Celery tasks on the same broker and pool.

Run from the repository root: ``python -m bench.queue`` (``--help`` for options). It starts a private
``redis-server`` (unless ``--redis-url`` is given) and real ``syncflow worker`` processes, and prints:
keyed no-op tasks/s with 1 and 2 worker processes, plain Celery no-op tasks/s as the baseline and the
ratio, Redis commands per reconcile, messages published per key under an event storm, and a stuck
backlog: keys waiting with no worker while the pump runs every second (broker messages, Redis
memory and pump run times before/after; the baseline is the state before the pumps).
"""

import sys

if __name__ == "__main__" and not __package__:
    sys.exit("run as a module from the repository root: python -m bench.queue")  # bench/ would shadow 'queue'

import argparse
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from redis import Redis

from syncflow.config import Settings, load_settings
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Outcome
from syncflow.tasks import CeleryPublisher, app, create_app, keyed_task, runtime

REPO = Path(__file__).resolve().parents[1]
COUNTER = "bench:done"


@keyed_task("bench-noop")
def noop(key: ObjectKey) -> None:
    """A keyed no-op: counts itself so the benchmark knows when a run is over."""
    runtime.service.redis.incr(COUNTER)


@app.task(name="syncflow.bench-plain", queue="sync")  # type: ignore[untyped-decorator]
def plain(key: str) -> None:
    """The baseline: a plain Celery task doing the same counting."""
    runtime.service.redis.incr(COUNTER)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def private_redis() -> Iterator[str]:
    """A throw-away redis-server, so command counts include only this benchmark."""
    directory = tempfile.mkdtemp(prefix="syncflow-bench-")
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", directory],
        stdout=subprocess.DEVNULL,
    )
    try:
        client = Redis(port=port)
        wait(lambda: _answers(client), 10)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(directory, ignore_errors=True)


def _answers(client: Redis) -> bool:
    try:
        return bool(client.ping())
    except OSError:
        return False
    except Exception:
        return False


def wait(predicate: Callable[[], object], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("benchmark step did not finish in time")
        time.sleep(0.005)


@contextmanager
def worker(settings: Settings, concurrency: int) -> Iterator[None]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SYNCFLOW_REDIS_URL": settings.redis_url}
    env["SYNCFLOW_BROKER_URL"] = settings.celery_broker_url
    env["SYNCFLOW_PREFLIGHT"] = "false"  # no-op tasks, no clusters
    env["SYNCFLOW_AGENT_NAME"] = settings.agent_name
    command = [str(Path(sys.executable).parent / "syncflow"), "worker", "-c", str(concurrency)]
    command += ["-Q", "sync,sync-bulk", "-I", "bench.queue", "-l", "WARNING", "-n", f"bench-{os.getpid()}@%h"]
    process = subprocess.Popen(
        command,
        env=env,
        cwd=REPO,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:  # a warm shutdown that hangs must not outlive the run
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)


def commands(redis: Redis) -> dict[str, int]:
    stats = redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}


class Bench:
    def __init__(self, redis_url: str, tasks: int, broker_url: str | None = None) -> None:
        self.settings = load_settings(redis_url=redis_url, broker_url=broker_url, agent_name="bench")
        self.redis = Redis.from_url(redis_url)
        self.app = create_app(self.settings)
        self.service = QueueService(self.redis, self.settings, CeleryPublisher(self.app))
        self.tasks = tasks
        self.round = 0

    def _warm_up(self) -> None:
        self.app.control.purge()  # a message a stopped worker left (RabbitMQ requeues it) must not count
        self.redis.set(COUNTER, 0)
        self.service.add(ObjectKey("bench-noop", "warm", "c", "", f"up-{self.round}"))
        wait(lambda: int(self.redis.get(COUNTER) or 0) == 1, 60)

    def keyed(self, concurrency: int) -> tuple[float, dict[str, int]]:
        """Keyed no-op tasks/s, and the Redis commands the run used."""
        self.round += 1
        keys = [ObjectKey("bench-noop", "r", "c", "ns", f"k{self.round}-{i}") for i in range(self.tasks)]
        with worker(self.settings, concurrency):
            self._warm_up()
            before = commands(self.redis)
            started = time.perf_counter()
            self.service.add_many(keys)
            wait(lambda: int(self.redis.get(COUNTER) or 0) == self.tasks + 1, 600)
            elapsed = time.perf_counter() - started
            used = delta(before, commands(self.redis))
        return self.tasks / elapsed, used

    def plain(self, concurrency: int) -> tuple[float, dict[str, int]]:
        """Plain Celery no-op tasks/s on the same broker and pool, and the Redis commands used."""
        self.round += 1
        with worker(self.settings, concurrency):
            self._warm_up()
            before = commands(self.redis)
            started = time.perf_counter()
            with self.app.producer_or_acquire() as producer:
                for i in range(self.tasks):
                    self.app.send_task(
                        "syncflow.bench-plain", args=[f"p{i}"], queue="sync", producer=producer
                    )
            wait(lambda: int(self.redis.get(COUNTER) or 0) == self.tasks + 1, 600)
            elapsed = time.perf_counter() - started
            used = delta(before, commands(self.redis))
        return self.tasks / elapsed, used

    def script_inner_commands(self, count: int = 200) -> float:
        """Commands that add + claim + done run inside their Lua scripts, per reconcile (no Celery)."""
        probe = QueueService(
            self.redis, self.settings.model_copy(update={"agent_name": "probe"}), lambda _: None
        )
        queue = probe.queues["sync"]
        before = commands(self.redis)
        for i in range(count):
            key = ObjectKey("bench-noop", "probe", "c", "", f"p{i}")
            queue.add(key)
            queue.claim(key, f"t{i}")
            queue.done(key, f"t{i}", Outcome.OK)
        used = delta(before, commands(self.redis))
        return (sum(used.values()) - used["evalsha"] - used.get("info", 0)) / count

    def storm(self, adds: int, distinct: int) -> tuple[int, int]:
        """Adds over ``distinct`` keys while 2 processes work; returns (messages published, runs)."""
        self.round += 1
        keys = [ObjectKey("bench-noop", "storm", "c", "ns", f"s{self.round}-{i}") for i in range(distinct)]
        rng = random.Random(1)
        with worker(self.settings, 2):
            self._warm_up()
            before = commands(self.redis)
            for _ in range(adds // 1000):
                self.service.add_many(rng.choice(keys) for _ in range(1000))
            wait(lambda: all(s.dirty == s.pending == s.leased == 0 for s in self.service.stats()), 600)
            used = delta(before, commands(self.redis))
        return used.get("lpush", 0), int(self.redis.get(COUNTER) or 0) - 1

    def stuck_backlog(self, keys: int, seconds: float, grace: float) -> dict[str, float]:
        """``keys`` added (published for real) with no worker, then the pump every second for
        ``seconds``: broker messages, Redis memory and pump run times before and after."""
        settings = self.settings.model_copy(update={"agent_name": "stuck", "pump_grace": grace})
        service = QueueService(self.redis, settings, CeleryPublisher(create_app(settings)))
        names = [ObjectKey("bench-noop", "stuck", "root:ws", "ns", f"obj-{i}") for i in range(keys)]
        for i in range(0, keys, 10_000):
            service.add_many(names[i : i + 10_000])
        messages_before = sum(service.broker_backlog().values())
        memory_before = int(self.redis.info("memory")["used_memory"])
        runs: list[float] = []
        republished = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            tick = time.monotonic()
            totals = service.pump()
            runs.append(time.monotonic() - tick)
            republished += totals.republished if totals else 0
            time.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))  # beat fires every second
        return {
            "messages_before": messages_before,
            "messages_after": sum(service.broker_backlog().values()),
            "memory_before_mb": memory_before / 2**20,
            "memory_after_mb": int(self.redis.info("memory")["used_memory"]) / 2**20,
            "runs": len(runs),
            "run_median_s": statistics.median(runs),
            "run_max_s": max(runs),
            "republished": republished,
        }


def per_task(used: dict[str, int], tasks: int) -> float:
    return sum(used.values()) / tasks


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--redis-url", help="Use this Redis instead of a private redis-server.")
    parser.add_argument(
        "--broker-url",
        help="Celery broker, e.g. amqp://guest:guest@127.0.0.1:5672/<vhost> (throughput only: the "
        "Redis command counts are then the queue state's alone).",
    )
    parser.add_argument("--tasks", type=int, default=2000, help="Tasks per throughput run.")
    parser.add_argument("--storm-adds", type=int, default=100_000)
    parser.add_argument("--storm-keys", type=int, default=1000)
    parser.add_argument("--backlog", type=int, default=20_000, help="Keys in the stuck backlog.")
    parser.add_argument("--backlog-seconds", type=float, default=30, help="How long the pump runs on it.")
    parser.add_argument("--backlog-grace", type=float, default=10, help="pump_grace for the backlog run.")
    parser.add_argument(
        "--sections",
        default="throughput,storm,backlog",
        help="Comma-separated sections to run: throughput, storm, backlog.",
    )
    options = parser.parse_args()
    sections = set(options.sections.split(","))
    if options.broker_url and sections != {"throughput"}:
        parser.error("--broker-url needs --sections throughput (the other sections read Redis broker lists)")

    with private_redis() if options.redis_url is None else _given(options.redis_url) as url:
        bench = Bench(url, options.tasks, options.broker_url)
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"Redis {url}; broker {bench.settings.celery_broker_url}; load average {load}")
        if "throughput" in sections:
            throughput(bench)
        if "storm" in sections:
            adds, distinct = options.storm_adds, options.storm_keys
            published, runs = bench.storm(adds, distinct)
            print(f"Event storm: {adds} adds over {distinct} keys with 2 processes working:")
            print(f"  {published} messages published = {published / distinct:.2f} per key; {runs} runs")
        if "backlog" in sections:
            b = bench.stuck_backlog(options.backlog, options.backlog_seconds, options.backlog_grace)
            print(
                f"Stuck backlog: {options.backlog} keys, no worker, pump every second for "
                f"{options.backlog_seconds:.0f} s, pump_grace {options.backlog_grace:.0f} s:"
            )
            print(
                f"  broker messages {b['messages_before']:.0f} -> {b['messages_after']:.0f} "
                f"(ratio {b['messages_after'] / b['messages_before']:.2f}); Redis memory "
                f"{b['memory_before_mb']:.0f} -> {b['memory_after_mb']:.0f} MB "
                f"(ratio {b['memory_after_mb'] / b['memory_before_mb']:.2f})"
            )
            print(
                f"  {b['runs']:.0f} pump runs: median {b['run_median_s']:.3f} s, max {b['run_max_s']:.3f} s; "
                f"{b['republished']:.0f} keys republished"
            )
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def throughput(bench: Bench) -> None:
    """Keyed vs plain Celery no-op tasks/s with 1 and 2 processes, and Redis commands per reconcile."""
    print(f"{bench.tasks} no-op tasks per run")
    figures = {}
    for concurrency in (1, 2):
        keyed, keyed_used = bench.keyed(concurrency)
        plain_rate, plain_used = bench.plain(concurrency)
        figures[concurrency] = (keyed, plain_rate, keyed_used, plain_used)
        print(
            f"  {concurrency} process(es): keyed {keyed:7.0f} tasks/s   "
            f"plain Celery {plain_rate:7.0f} tasks/s   ratio {keyed / plain_rate:.2f}"
        )
    _, _, keyed_used, plain_used = figures[2]
    print("Redis commands per reconcile, 2 processes (Celery messaging, task events, the no-op's INCR):")
    keyed_per, plain_per = per_task(keyed_used, bench.tasks), per_task(plain_used, bench.tasks)
    inner = bench.script_inner_commands()
    print(f"  executed by Redis: keyed {keyed_per:.1f}   plain Celery {plain_per:.1f}")
    print(
        f"  round trips (minus the {inner:.0f} commands run inside the scripts): "
        f"keyed {keyed_per - inner:.1f}   plain Celery {plain_per:.1f}"
    )
    print(f"  of which queue scripts (add, claim, done): {keyed_used.get('evalsha', 0) / bench.tasks:.2f}")


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url


if __name__ == "__main__":
    main()
