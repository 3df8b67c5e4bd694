"""Integration: a real prefork worker (-c 2) serves /metrics with its children's counters added up,
and /healthz and /readyz from its master."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.multiprocess import MultiProcessCollector
from redis import Redis

from syncflow.config import load_settings
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import CELERY_QUEUES
from syncflow.queue.service import QueueService
from syncflow.tasks import CeleryPublisher, create_app
from tests.queue import handlers  # noqa: F401  (registers the test verbs in this process too)
from tests.queue.conftest import REAL_REDIS_URL, Processes, RedisServer, free_port, unique_agent
from tests.support.scrape import scrape, value
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration


def get(port: int, path: str) -> tuple[int, dict[str, Any]]:
    """(status, JSON body) of a GET; (0, {}) while nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    except OSError:
        return 0, {}


def run_pids(redis: Redis, agent: str, key: ObjectKey) -> list[str]:
    """The pool processes that ran ``key`` (the ``rec`` handler logs ``S|<pid>-<run>|...``)."""
    entries = redis.lrange(f"sf:{agent}:test:runs:{key}", 0, -1)
    return [e.decode().split("|")[1].split("-")[0] for e in entries if e.decode().startswith("S|")]


def per_process(directory: Path, name: str, **labels: str) -> dict[str, float]:
    """``name``'s value in each process's own multiprocess file (by pid)."""
    found = {}
    for path in directory.glob("counter_*.db"):
        for family in MultiProcessCollector.merge([str(path)], accumulate=True):  # type: ignore[no-untyped-call]
            for sample in family.samples:
                if sample.name == name and labels.items() <= sample.labels.items():
                    pid = path.stem.removeprefix("counter_")
                    found[pid] = found.get(pid, 0.0) + sample.value
    return found


def test_children_counters_add_up_and_the_worker_is_ready(
    processes_factory: Callable[..., Processes], tmp_path: Path
) -> None:
    agent = unique_agent()
    settings = load_settings(agent_name=agent, redis_url=REAL_REDIS_URL, task_time_limit=10, lease_ttl=15)
    redis = Redis.from_url(REAL_REDIS_URL)
    service = QueueService(redis, settings, CeleryPublisher(create_app(settings)))
    group = tmp_path / "metrics"
    group.mkdir()
    (group / "counter_424242.db").write_bytes(b"left by an earlier run")  # cleaned at start
    processes = processes_factory(settings)
    processes.env["PROMETHEUS_MULTIPROC_DIR"] = str(group)
    metrics_port, health_port = free_port(), free_port()
    worker = processes.worker(
        "worker",
        "--metrics-address",
        f"127.0.0.1:{metrics_port}",
        "--health-address",
        f"127.0.0.1:{health_port}",
    )

    wait_for(lambda: get(health_port, "/readyz")[0] == 200, timeout=30, what=processes.logs)
    assert get(health_port, "/readyz")[1] == {"ready": True, "broker": "connected", "redis": "ok"}
    assert get(health_port, "/healthz") == (200, {"status": "ok"})
    assert not (group / "counter_424242.db").exists()

    # The first key holds one pool process for 3 s; the second must run in the other one meanwhile.
    slow = ObjectKey("rec", "metrics", "root:ws", "default", "slow")
    quick = ObjectKey("rec", "metrics", "root:ws", "default", "quick")
    redis.set(f"sf:{agent}:test:delay:{slow}", 3)
    service.add(slow)
    wait_for(lambda: run_pids(redis, agent, slow), timeout=30, what=processes.logs)
    service.add(quick)
    fixed = ObjectKey("perm", "metrics", "root:ws", "default", "broken")
    service.add(fixed)  # parks: a permanent error

    def ok_runs() -> float | None:
        samples = scrape(metrics_port)
        return value(samples, "syncflow_queue_tasks_total", agent=agent, task="syncflow.rec", outcome="ok")

    wait_for(lambda: ok_runs() == 2, timeout=30, what=lambda: f"{scrape(metrics_port)}\n{processes.logs()}")
    [slow_pid], [quick_pid] = run_pids(redis, agent, slow), run_pids(redis, agent, quick)
    assert slow_pid != quick_pid  # two children did the work ...
    by_pid = per_process(group, "syncflow_queue_tasks_total", task="syncflow.rec", outcome="ok")
    assert {pid: n for pid, n in by_pid.items() if n} == {slow_pid: 1.0, quick_pid: 1.0}  # ... in their files
    assert worker.pid not in {int(slow_pid), int(quick_pid)}
    parked = wait_for(
        lambda: value(
            scrape(metrics_port),
            "syncflow_queue_tasks_total",
            agent=agent,
            task="syncflow.perm",
            outcome="permanent",
        ),
        timeout=30,
        what=processes.logs,
    )
    assert parked == 1
    samples = scrape(metrics_port)
    assert value(samples, "syncflow_queue_keys", agent=agent, queue="sync", state="parked") == 1
    assert value(samples, "syncflow_redis_up", agent=agent) == 1
    counted = {dict(labels)["queue"] for name, labels in samples if name == "syncflow_queue_messages"}
    assert counted == set(CELERY_QUEUES), "every Celery queue's broker list is counted"
    assert {dict(labels)["agent"] for _, labels in samples} == {agent}


def test_readyz_fails_fast_when_redis_goes_away(
    processes_factory: Callable[..., Processes], redis_server: RedisServer
) -> None:
    settings = load_settings(agent_name=unique_agent(), redis_url=redis_server.url)
    processes = processes_factory(settings)
    health_port = free_port()
    processes.worker("worker", "--health-address", f"127.0.0.1:{health_port}")
    wait_for(lambda: get(health_port, "/readyz")[0] == 200, timeout=30, what=processes.logs)

    redis_server.kill()
    _, body = wait_for(
        lambda: answer if (answer := get(health_port, "/readyz"))[0] == 503 else None,
        timeout=15,
        what=processes.logs,
    )
    assert body["ready"] is False
    assert body["redis"] != "ok"
    assert get(health_port, "/healthz") == (200, {"status": "ok"})  # alive: Celery reconnects
