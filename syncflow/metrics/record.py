"""What the engine, the modes and the processes call to record a metric (a few microseconds each)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

Direction = Literal["spec", "status", "delete", "upsync"]
HeartbeatResult = Literal["ok", "unreachable", "failed"]
ERROR_KINDS = {"transient": "transient", "permanent": "permanent"}
"""Queue outcomes that are their own error kind; every other failure is ``error``."""
NO_ANSWER = "<error>"
"""The ``code`` of a request that got no answer (client-go's)."""


_queued_at: ContextVar[tuple[float, str] | None] = ContextVar("syncflow_key_queued_at", default=None)


@contextmanager
def key_queued_at(moment: float | None, mode: str) -> Iterator[None]:
    """Inside the block, the key being processed was queued at ``moment`` (epoch seconds; None:
    unknown) by a watcher of ``mode``: the writes that sync it observe their latency from then."""
    token = _queued_at.set(None if moment is None else (moment, mode))
    try:
        yield
    finally:
        _queued_at.reset(token)


def sync_latency(rule: str, direction: Direction) -> None:
    """A write that synced an object of ``rule`` answered: the time since its key was queued."""
    queued = _queued_at.get()
    if queued is None:
        return
    from syncflow.metrics import instruments

    moment, mode = queued
    instruments.SYNC_LATENCY.labels(mode, rule, direction).observe(max(0.0, time.time() - moment))


def wrote(resource: str, direction: Direction) -> None:
    """The engine wrote one object (or its status) of ``resource`` in ``direction``."""
    from syncflow.metrics import instruments

    instruments.RESOURCES_SYNCED.labels(resource, direction).inc()


@contextmanager
def sync_run(resource: str) -> Iterator[None]:
    """Time a sync or status task body of ``resource``; count its failure by kind."""
    from syncflow.metrics import instruments
    from syncflow.queue.errors import classify

    started = time.perf_counter()
    try:
        yield
    except Exception as exc:
        outcome = classify(exc).value
        if outcome != "after":  # waiting (e.g. for a deletion) is not a failure
            instruments.SYNC_ERRORS.labels(resource, ERROR_KINDS.get(outcome, "error")).inc()
        raise
    finally:
        instruments.SYNC_DURATION.labels(resource).observe(time.perf_counter() - started)


def heartbeat(result: HeartbeatResult) -> None:
    """One workload-mode heartbeat and how it went."""
    from syncflow.metrics import instruments

    instruments.HEARTBEATS.labels(result).inc()


def connection(endpoint: str, up: bool) -> None:
    """The last request or watch connection to ``endpoint`` got an answer (or did not)."""
    if not endpoint:
        return
    from syncflow.metrics import instruments

    instruments.CONNECTION_STATUS.labels(endpoint).set(1 if up else 0)


def task_outcome(task: str, outcome: str) -> None:
    """A Celery task ran and ended with ``outcome``."""
    from syncflow.metrics import instruments

    instruments.TASKS.labels(task, outcome).inc()


_rule_names: set[str] = set()


def rules(ready: Mapping[str, bool]) -> None:
    """The leading watcher's rules now, by name (ready or not); rules no longer there are dropped."""
    from syncflow.metrics import instruments

    gauge = instruments.RULE_READY
    for name in _rule_names - set(ready):
        gauge.remove(name)
    for name, is_ready in ready.items():
        gauge.labels(name).set(1 if is_ready else 0)
    _rule_names.clear()
    _rule_names.update(ready)


def published_resources(count: int) -> None:
    """How many PublishedResources this agent manages now (api-syncagent's gauge)."""
    from syncflow.metrics import instruments

    instruments.PUBLISHED_RESOURCES.set(count)


def queue_added(queue: str, keys: int) -> None:
    """The keyed work queue ``queue`` newly marked ``keys`` keys dirty (client-go's adds)."""
    if keys:
        from syncflow.metrics import instruments

        instruments.WORKQUEUE_ADDS.labels(queue).inc(keys)


def queue_waited(queue: str, seconds: float) -> None:
    """A key of ``queue`` was claimed after being pending for ``seconds``."""
    from syncflow.metrics import instruments

    instruments.WORKQUEUE_QUEUE_DURATION.labels(queue).observe(seconds)


def queue_worked(queue: str, seconds: float) -> None:
    """A key of ``queue`` was released ``seconds`` after its claim."""
    from syncflow.metrics import instruments

    instruments.WORKQUEUE_WORK_DURATION.labels(queue).observe(seconds)


def queue_retried(queue: str) -> None:
    """A run of a key of ``queue`` failed and the queue runs the key again."""
    from syncflow.metrics import instruments

    instruments.WORKQUEUE_RETRIES.labels(queue).inc()


def request(method: str, host: str, status: int | None) -> None:
    """One HTTP request to an API server at ``host`` (``host:port``) and its answer's status (None: no
    answer)."""
    from syncflow.metrics import instruments

    instruments.REST_REQUESTS.labels(NO_ANSWER if status is None else str(status), method, host).inc()


def leading(lease: str, leader: bool) -> None:
    """Whether this process holds the Lease named ``lease`` now."""
    from syncflow.metrics import instruments

    instruments.LEADER.labels(lease).set(1 if leader else 0)
