"""Flower stays useful: workers send task events for keyed work but none for beat's housekeeping."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from celery import Celery
from redis import Redis

from syncflow.app.schedule import BEAT_SCHEDULE, housekeeping_tasks
from syncflow.config import Settings, load_settings
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import pump_last_key
from syncflow.queue.service import QueueService
from syncflow.tasks import CeleryPublisher, create_app
from tests.queue import handlers  # registers the test verbs in this process too
from tests.queue.conftest import REAL_REDIS_URL, Processes, delete_agent_keys, unique_agent
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration


class EventLog:
    """Captures every Celery event of one agent (as Flower does) in a background thread."""

    def __init__(self, app: Celery) -> None:
        self.app = app
        self.events: list[dict[str, Any]] = []
        self.batches: list[int] = []
        """Events per broker message carrying task events."""
        self.listening = threading.Event()
        self.thread = threading.Thread(target=self._run, name="events", daemon=True)

    def _run(self) -> None:
        with self.app.connection() as connection:
            self.receiver = self.app.events.Receiver(connection, handlers={"*": self.events.append})
            # called once the consumer is ready, then once per loop
            self.receiver.on_iteration = self.listening.set
            receive = self.receiver._receive

            def counted(body: Any, message: Any) -> None:
                if isinstance(body, list) or str(body.get("type", "")).startswith("task-"):
                    self.batches.append(len(body) if isinstance(body, list) else 1)
                receive(body, message)

            self.receiver._receive = counted
            self.receiver.capture(limit=None, timeout=None, wakeup=False)

    def stop(self) -> None:
        self.receiver.should_stop = True
        self.thread.join(timeout=10)

    def task_names(self) -> dict[str, str]:
        """uuid → task name, from task-received events (the only task events that carry the name)."""
        return {e["uuid"]: e["name"] for e in list(self.events) if e["type"] == "task-received"}

    def task_event_uuids(self) -> set[str]:
        return {e["uuid"] for e in list(self.events) if e["type"].startswith("task-")}


@pytest.fixture
def agent_settings() -> Iterator[Settings]:
    settings = load_settings(agent_name=unique_agent(), redis_url=REAL_REDIS_URL)
    yield settings
    redis = Redis.from_url(REAL_REDIS_URL)
    delete_agent_keys(redis, settings.agent_name)
    redis.close()


@contextlib.contextmanager
def worker_watched(
    settings: Settings, processes_factory: Callable[[Settings], Processes]
) -> Iterator[tuple[EventLog, QueueService, Processes]]:
    """An event log listening (as Flower does), a queue service and the processes to start a worker
    with; all stopped afterwards."""
    app = create_app(settings)
    events = EventLog(app)
    events.thread.start()
    redis = Redis.from_url(REAL_REDIS_URL)
    processes = processes_factory(settings)
    try:
        assert events.listening.wait(10)
        yield events, QueueService(redis, settings, CeleryPublisher(app)), processes
    finally:
        events.stop()
        processes.stop_all()
        redis.close()


def test_housekeeping_tasks_send_no_task_events(
    agent_settings: Settings, processes_factory: Callable[[Settings], Processes]
) -> None:
    assert {"syncflow.pump", "syncflow.resync"} <= housekeeping_tasks(BEAT_SCHEDULE)
    with worker_watched(agent_settings, processes_factory) as (events, service, processes):
        processes.worker()
        processes.beat()
        service.add(ObjectKey.parse("rec/r/c/ns/visible"))
        wait_for(
            lambda: "syncflow.rec" in events.task_names().values(),
            timeout=60,
            what=lambda: f"a task-received event of the keyed task; logs:\n{processes.logs()}",
        )
        last_run = pump_last_key(agent_settings.agent_name)
        runs: set[bytes] = set()

        def pumped_three_times() -> bool:
            if (value := service.redis.get(last_run)) is not None:
                runs.add(value)
            return len(runs) >= 3

        wait_for(pumped_three_times, timeout=60, what="three pumps run by the worker")
        wait_for(
            lambda: any(e["type"] == "task-succeeded" for e in list(events.events)),
            timeout=30,
            what="the keyed task's task-succeeded event",
        )
    names = events.task_names()
    seen = sorted({e["type"] for e in events.events})
    assert set(names.values()) == {"syncflow.rec"}, seen
    assert events.task_event_uuids() == set(names), seen
    assert "worker-online" in seen


def test_task_events_are_sent_in_batches_and_none_is_lost(
    agent_settings: Settings, processes_factory: Callable[[Settings], Processes]
) -> None:
    """A busy worker sends its task events a few to a broker message, and Flower still sees each
    task received, started and succeeded."""
    keys = [ObjectKey.parse(f"rec/r/c/ns/batch-{i}") for i in range(40)]
    with worker_watched(agent_settings, processes_factory) as (events, service, processes):
        for key in keys:
            service.add(key)  # a message each
        processes.worker()

        def every_task_succeeded() -> bool:
            done = {e["uuid"] for e in list(events.events) if e["type"] == "task-succeeded"}
            return len(done) >= len(keys)

        wait_for(every_task_succeeded, timeout=60, what=lambda: f"40 tasks succeeded:\n{processes.logs()}")
    by_type: dict[str, set[str]] = {}
    for event in events.events:
        by_type.setdefault(event["type"], set()).add(event.get("uuid", ""))
    assert [len(by_type[f"task-{kind}"]) for kind in ("received", "started", "succeeded")] == [40, 40, 40]
    task_events = sum(len(uuids) for kind, uuids in by_type.items() if kind.startswith("task-"))
    assert sum(events.batches) == task_events
    assert len(events.batches) < task_events / 2, events.batches


def test_a_task_shows_each_key_of_its_message(
    agent_settings: Settings, processes_factory: Callable[[Settings], Processes]
) -> None:
    """Keys published together share a task; Flower lists it with every key as an argument and its
    result says how each key went."""
    keys = [ObjectKey.parse(f"rec/r/c/ns/together-{i}") for i in range(3)]
    with worker_watched(agent_settings, processes_factory) as (events, service, processes):
        service.add_many(keys)
        processes.worker()
        wait_for(
            lambda: any(e["type"] == "task-succeeded" for e in list(events.events)),
            timeout=60,
            what=lambda: f"the task's task-succeeded event:\n{processes.logs()}",
        )
    [received] = [e for e in events.events if e["type"] == "task-received"]
    [succeeded] = [e for e in events.events if e["type"] == "task-succeeded"]
    assert all(repr(str(key)) in received["args"] for key in keys), received["args"]
    assert all(f"{str(key)!r}: 'ok'" in succeeded["result"] for key in keys), succeeded["result"]


def test_a_task_fails_by_key_when_keys_it_helped_run_failed(
    agent_settings: Settings, processes_factory: Callable[[Settings], Processes]
) -> None:
    """A task that runs keys it queued itself (as a poll does) fails, naming each of them that failed:
    their own messages find them run and succeed, so Flower would show the failure nowhere else."""
    helper = ObjectKey.parse("helps/r/c/ns/batch")
    fixed, *failing = [ObjectKey("perm", "r", "c", "ns", f"batch-{i}") for i in range(handlers.HELPED)]
    with worker_watched(agent_settings, processes_factory) as (events, service, processes):
        prefix = f"sf:{agent_settings.agent_name}:test"
        service.redis.set(f"{prefix}:fixed:{fixed}", 1)
        service.add(helper)
        processes.worker("worker", "-c", "1")  # one process: the keys' own messages wait for the helper
        wait_for(  # the helper's failure, then the task of the keys' own message
            lambda: {"task-failed", "task-succeeded"} <= {e["type"] for e in list(events.events)},
            timeout=60,
            what=lambda: f"both tasks' ends:\n{processes.logs()}",
        )
        attempts = [int(service.redis.get(f"{prefix}:attempts:{key}") or 0) for key in (fixed, *failing)]
    names = events.task_names()
    [failed] = [e for e in events.events if e["type"] == "task-failed"]
    [succeeded] = [e for e in events.events if e["type"] == "task-succeeded"]
    assert names[failed["uuid"]] == "syncflow.helps"
    assert names[succeeded["uuid"]] == "syncflow.perm"
    assert all(f"{str(key)!r}: 'stale'" in succeeded["result"] for key in failing), succeeded["result"]
    assert failed["exception"].startswith("KeysFailedError('2 of 4 keys failed: "), failed["exception"]
    assert all(str(key) in failed["exception"] for key in failing), failed["exception"]
    assert str(fixed) not in failed["exception"]
    assert attempts == [1, 1, 1], "each helped key ran once, here"
