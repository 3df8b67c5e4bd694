"""Keyed tasks for the integration tests, controlled and observed through Redis.

Workers import this module with ``-I tests.queue.handlers``. Every Redis key lives under the test's
agent prefix, so tests sharing one Redis never see each other's data.
"""

from __future__ import annotations

import os
import signal
import time
import uuid

from celery.exceptions import SoftTimeLimitExceeded

from syncflow.queue.errors import PermanentError
from syncflow.queue.keys import ObjectKey
from syncflow.tasks import help_here, keyed_task, runtime


def test_key(name: str) -> str:
    """Name of a test-data key of the current agent."""
    return f"sf:{runtime.settings.agent_name}:test:{name}"


@keyed_task("rec")
def record(key: ObjectKey) -> None:
    """Record start (with the object version it saw) and end; in between sleep ``test:delay:<key>``
    or ``test:delay`` seconds."""
    redis = runtime.service.redis
    run = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    version = int(redis.get(test_key(f"ver:{key}")) or 0)
    log = test_key(f"runs:{key}")
    redis.rpush(log, f"S|{run}|{time.time_ns()}|{version}")
    time.sleep(float(redis.get(test_key(f"delay:{key}")) or redis.get(test_key("delay")) or 0))
    redis.rpush(log, f"E|{run}|{time.time_ns()}|{version}")


@keyed_task("perm")
def needs_fix(key: ObjectKey) -> None:
    """Fail permanently until ``test:fixed:<key>`` exists, then record a success."""
    redis = runtime.service.redis
    redis.incr(test_key(f"attempts:{key}"))
    if not redis.exists(test_key(f"fixed:{key}")):
        raise PermanentError(f"dependency of {key.name} is missing")
    redis.incr(test_key(f"ok:{key}"))


@keyed_task("hang")
def hang(key: ObjectKey) -> None:
    """For an object named ``stuck…``, hang until the hard time limit kills the process (the soft
    limit cannot interrupt it); for any other, return at once."""
    redis = runtime.service.redis
    redis.incr(test_key(f"attempts:{key}"))
    if not key.name.startswith("stuck"):
        return
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            time.sleep(deadline - time.monotonic())
        except SoftTimeLimitExceeded:
            continue  # as if stuck in code no signal reaches


@keyed_task("poison")
def poison(key: ObjectKey) -> None:
    """Kill the worker process that runs it, every time (like an out-of-memory kill)."""
    runtime.service.redis.incr(test_key(f"attempts:{key}"))
    os.kill(os.getpid(), signal.SIGKILL)


HELPED = 3
"""Keys a ``helps`` key queues and helps run."""


@keyed_task("helps")
def helps(key: ObjectKey) -> None:
    """Like a poll: queue ``HELPED`` ``perm`` keys named ``<name>-<i>`` and help run them here."""
    keys = [ObjectKey("perm", key.rule, key.cluster, key.namespace, f"{key.name}-{i}") for i in range(HELPED)]
    runtime.service.add_many(keys)
    help_here(needs_fix, "syncflow.perm", keys)
