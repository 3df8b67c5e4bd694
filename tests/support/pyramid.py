"""The test pyramid's rule: a test that is not marked ``integration`` starts no process.

``make unit`` (``pytest -m "not integration"``) runs the tests that need nothing but this Python
process (and, where a test says so, the session's Redis): it stays fast and runs anywhere. A test that
starts a redis-server, a devcluster, a ``syncflow`` process, kubectl, a linter binary or a Celery
worker is an integration test, for ``make test`` only.

The root conftest enforces it: while a test that is not marked ``integration`` is set up, run and
torn down, starting a process from the main thread fails that test, naming what it tried to start.
Threads are left alone (a background thread of an earlier test's stack is not this test's doing).
Tests are marked integration by a module's ``pytestmark``, a test's own mark, or automatically when
they use a fixture of :data:`PROCESS_FIXTURES`.
"""

from __future__ import annotations

import contextlib
import multiprocessing.util
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

PROCESS_FIXTURES = frozenset(
    {
        "bootstrap_env",  # tests/bootstrap: two devclusters and syncflow's CLI
        "cluster",  # tests/chart, tests/cli, tests/console: every fixture of this name runs a devcluster
        "clusters_env",  # tests/clusters: devclusters and a clusters-mode agent
        "devcluster",  # tests/devcluster, tests/kube: a devcluster process
        "edge_env",  # tests/edge: devclusters, a proxy and an edge agent
        "harness",  # tests/conformance: every mode's full stack
        "kcp",  # tests/cli, tests/devcluster: every fixture of this name runs a kcp devcluster
        "make_live",  # tests/queue: Celery workers and beat
        "processes_factory",  # tests/queue: syncflow processes
        "publish_env",  # tests/publish: devclusters and a publish agent
        "redis_server",  # tests/queue: a private redis-server
        "workload_env",  # tests/workload: devclusters and a workload agent
    }
)
"""Fixtures that start processes: a test using one is marked ``integration`` at collection."""


class ProcessStartedError(AssertionError):
    """A test that is not marked ``integration`` started a process."""


def mark_integration(items: list[pytest.Item]) -> None:
    """Mark ``integration`` every item that uses a fixture of :data:`PROCESS_FIXTURES`."""
    for item in items:
        used = PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        if used and item.get_closest_marker("integration") is None:
            item.add_marker(pytest.mark.integration)


def _describe(args: Any) -> str:
    if isinstance(args, str | bytes | os.PathLike):
        return os.fsdecode(args)
    return " ".join(os.fsdecode(a) for a in args)[:200]


@contextlib.contextmanager
def no_processes(test: str) -> Iterator[None]:
    """Inside the block, starting a process from the main thread raises :class:`ProcessStartedError`."""
    execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]
    fork = os.fork
    spawnv_passfds = multiprocessing.util.spawnv_passfds

    def refuse(what: str) -> None:
        if threading.current_thread() is threading.main_thread():
            raise ProcessStartedError(
                f"{test} is not marked integration but starts a process ({what}): mark it "
                "pytest.mark.integration, or test it against an in-memory fake (see tests/support/pyramid.py)"
            )

    def guarded_execute_child(self: subprocess.Popen[Any], args: Any, *rest: Any, **options: Any) -> Any:
        refuse(_describe(args))
        return execute_child(self, args, *rest, **options)

    def guarded(original: Callable[..., Any], what: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            refuse(what)
            return original(*args, **kwargs)

        return call

    subprocess.Popen._execute_child = guarded_execute_child  # type: ignore[attr-defined]
    os.fork = guarded(fork, "os.fork")
    multiprocessing.util.spawnv_passfds = guarded(spawnv_passfds, "multiprocessing spawn")
    try:
        yield
    finally:
        subprocess.Popen._execute_child = execute_child  # type: ignore[attr-defined]
        os.fork = fork
        multiprocessing.util.spawnv_passfds = spawnv_passfds
