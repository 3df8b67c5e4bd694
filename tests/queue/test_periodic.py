"""Periodic (beat) tasks log one line when they fail and end normally, never with a traceback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from syncflow import tasks
from syncflow.config import load_settings
from tests.queue.conftest import free_port, unique_agent
from tests.support.devcluster import DevclusterProcess, start_devcluster

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
