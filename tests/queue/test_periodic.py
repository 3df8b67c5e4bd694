"""Periodic (beat) tasks log one line when they fail and end normally, never with a traceback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from syncflow import tasks
from syncflow.config import load_settings
from syncflow.sync.resync import due, schedule_next
from tests.queue.conftest import delete_agent_keys, free_port, unique_agent
from tests.support.devcluster import DevclusterProcess, start_devcluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """A plain devcluster: it serves no kcp API, so every kcp request answers 404."""
    server = start_devcluster(tmp_path_factory.mktemp("periodic"))
    yield server
    server.stop()


def failures(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == "periodic.failed"]


def assert_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info], "a periodic task logged a traceback"


def test_resync_answered_404_logs_one_line_and_succeeds(
    devcluster: DevclusterProcess, caplog: pytest.LogCaptureFixture
) -> None:
    kubeconfig = str(Path(devcluster.kubeconfig))
    tasks.bind(
        load_settings(
            agent_name=unique_agent(),
            kubeconfig=kubeconfig,
            kcp_kubeconfig=kubeconfig,
            apiexportendpointslice_ref="not-served-yet",
        )
    )
    with caplog.at_level(logging.INFO):
        result = tasks.resync.apply()
    assert result.successful() and result.result is None
    [line] = failures(caplog)
    fields = line.syncflow_fields  # type: ignore[attr-defined]
    assert fields["task"] == "syncflow.resync"
    assert str(fields["error"]).startswith("ApiException: 404 Not Found")
    assert "\n" not in str(fields["error"])
    assert_no_traceback(caplog)


def test_pump_without_redis_logs_one_line_and_succeeds(caplog: pytest.LogCaptureFixture) -> None:
    tasks.bind(load_settings(agent_name=unique_agent(), redis_url=f"redis://127.0.0.1:{free_port()}/0"))
    with caplog.at_level(logging.INFO):
        result = tasks.pump.apply()
    assert result.successful() and result.result is None
    [line] = failures(caplog)
    fields = line.syncflow_fields  # type: ignore[attr-defined]
    assert fields["task"] == "syncflow.pump" and "Connection refused" in str(fields["error"])
    assert_no_traceback(caplog)


def test_a_resync_pass_that_does_not_finish_is_retried_after_its_claim(redis: Redis) -> None:
    """Found by bench/soak.py: the worker running the resync right after Redis was wiped was SIGKILLed,
    and the pass had already booked the rule's whole period (an hour there), so what the wipe lost was
    not looked for again. A pass only claims its rule for as long as a pass may run; a complete pass
    books the period."""
    agent = unique_agent()
    hour = 3600.0
    try:
        assert due(redis, agent, "rule", hour, claim=0.3)
        assert not due(redis, agent, "rule", hour, claim=0.3), "two passes of one rule at once"
        wait_for(  # the pass died without schedule_next: the rule is due again once its claim expired
            lambda: due(redis, agent, "rule", hour, claim=0.3), timeout=5, what="the rule to be due again"
        )
        schedule_next(redis, agent, "rule", hour)
        assert not due(redis, agent, "rule", hour, claim=0.3)
        assert redis.pttl(f"sf:{agent}:resync:rule") > 0.9 * hour * 1000
        assert due(redis, agent, "rule", hour, claim=0.3, kind="status"), "the status pass is separate"
    finally:
        delete_agent_keys(redis, agent)
