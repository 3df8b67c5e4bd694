"""Session-wide set-up: a Redis for the whole session, no process left behind, and the test pyramid.

``make test`` must pass on a machine with only python3 and make: when no Redis answers at
``SYNCFLOW_TEST_REDIS_URL`` a private ``redis-server`` runs for the session (see
:mod:`tests.support.redis`). At the end, any process the session started that is still running
(a fixture that forgot to stop a devcluster, worker or proxy) is reported, killed, and fails the run.
A test that is not marked ``integration`` may start no process at all (:mod:`tests.support.pyramid`):
``make unit`` runs those.
"""

from __future__ import annotations

import atexit
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from syncflow.runtime.stack import Stack
from tests.support import leftovers, pyramid
from tests.support.redis import provide_session_redis, session_redis_url

_session: dict[str, object] = {}

# Property tests draw the same examples on every run and machine (seeded from each test, no example
# database): a CI run never fails on a case no earlier run drew.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile("deterministic")


def _stop_redis() -> None:
    stack = _session.pop("redis", None)
    if isinstance(stack, Stack):
        stack.stop()


def _provide() -> None:
    """Provide Redis and mark the processes of this session.

    This runs when pytest imports this file, which it does before any other conftest or test module
    (parents first), so module-level reads of ``SYNCFLOW_TEST_REDIS_URL`` already see the session's
    Redis, also when a run starts in a subdirectory (``pytest tests/queue``).
    """
    workdir = Path(tempfile.mkdtemp(prefix="syncflow-test-redis-"))
    _session["redis"] = provide_session_redis(workdir)
    atexit.register(_stop_redis)  # should pytest stop before pytest_unconfigure
    os.environ[leftovers.MARKER_VARIABLE] = _session["marker"] = uuid.uuid4().hex


if "PYTEST_XDIST_WORKER" not in os.environ:  # xdist workers share the controller's set-up
    _provide()


def pytest_report_header(config: pytest.Config) -> str:
    """Say which Redis the session uses."""
    stack = _session.get("redis")
    started = isinstance(stack, Stack) and stack.children
    how = (
        f"a private redis-server started for this session ({stack.children[0].process.args[0]})"
        if started
        else "already running"
    )
    return f"redis: {session_redis_url()} ({how})"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that uses a fixture which starts processes is an integration test."""
    pyramid.mark_integration(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A test that is not marked ``integration`` starts no process (set-up, call and teardown)."""
    if item.get_closest_marker("integration") is not None:
        return (yield)
    with pyramid.no_processes(item.nodeid):
        return (yield)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if any process it started is still alive; kill those."""
    marker = _session.get("marker")
    if not isinstance(marker, str):
        return
    stack = _session.get("redis")
    exclude = {os.getpid()} | (
        {child.process.pid for child in stack.children} if isinstance(stack, Stack) else set()
    )
    found = leftovers.leftovers(marker, exclude)
    if found:
        leftovers.kill(found)
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = "\n".join(f"  {p.pid}: {p.command}" for p in found)
        message = f"processes started by this test session were still running at its end (killed):\n{lines}"
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(message, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the session's private Redis."""
    _stop_redis()
