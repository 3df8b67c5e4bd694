"""Issue 16: ``--latency`` makes devcluster play a remote API server (health checks stay immediate)."""

from __future__ import annotations

import subprocess
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from kubernetes import client, config

from tests.support.devcluster import VENV_BIN, DevclusterProcess, start_devcluster

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process

LATENCY = 0.2


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """A devcluster that answers every API request 200 ms late."""
    server = start_devcluster(tmp_path_factory.mktemp("remote"), "--latency", "200ms", "--no-simulate")
    yield server
    server.stop()


def _seconds(call: object) -> float:
    assert callable(call)
    started = time.monotonic()
    call()
    return time.monotonic() - started


def test_api_requests_are_delayed_but_health_checks_are_not(remote: DevclusterProcess) -> None:
    api = config.new_client_from_config(config_file=str(remote.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        read = _seconds(lambda: core.read_namespace("default", _request_timeout=10))
    finally:
        api.close()
    with urllib.request.urlopen(f"{remote.url}/healthz", timeout=10) as warm_up:
        assert warm_up.read() == b"ok"
    health = _seconds(lambda: urllib.request.urlopen(f"{remote.url}/healthz", timeout=10).close())
    assert read >= LATENCY
    assert health < LATENCY


def test_delayed_requests_do_not_wait_for_each_other(remote: DevclusterProcess) -> None:
    """The delay is an asyncio sleep: five concurrent GETs take about one delay, not five."""
    api = config.new_client_from_config(config_file=str(remote.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=5) as pool:
            answers = list(pool.map(lambda _: core.read_namespace("default", _request_timeout=10), range(5)))
        elapsed = time.monotonic() - started
    finally:
        api.close()
    assert [answer.metadata.name for answer in answers] == ["default"] * 5
    assert LATENCY <= elapsed < 5 * LATENCY


@pytest.mark.parametrize("value", ["soon", "-20ms"])
def test_a_malformed_latency_is_a_cli_error(tmp_path: Path, value: str) -> None:
    result = subprocess.run(
        [str(VENV_BIN / "syncflow"), "devcluster", "--kubeconfig", str(tmp_path / "k"), "--latency", value],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "Invalid value for '--latency'" in result.stderr
    assert not (tmp_path / "k").exists()
