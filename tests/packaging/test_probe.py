"""The image's health probe asks the process's /healthz or /readyz and exits by the answer."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from syncflow.probe import check, probe_url
from syncflow.util.health import HealthServer

READY: dict[str, bool] = {}


@pytest.fixture
def server() -> Iterator[HealthServer]:
    READY["ready"] = False
    health = HealthServer("127.0.0.1:0", lambda: (READY["ready"], {}))
    health.start()
    yield health
    health.stop()


def test_wildcard_hosts_are_probed_on_loopback() -> None:
    assert probe_url("0.0.0.0:8080", "/healthz") == "http://127.0.0.1:8080/healthz"
    assert probe_url(":8080", "/readyz") == "http://127.0.0.1:8080/readyz"
    assert probe_url("10.1.2.3:9", "/healthz") == "http://10.1.2.3:9/healthz"


def test_probe_follows_the_health_server(server: HealthServer) -> None:
    address = f"0.0.0.0:{server.port}"
    assert check(address, "/healthz") == (True, f"http://127.0.0.1:{server.port}/healthz: 200")
    assert check(address, "/readyz") == (False, f"http://127.0.0.1:{server.port}/readyz: 503")
    READY["ready"] = True
    assert check(address, "/readyz")[0] is True


def test_nothing_listening_is_unhealthy_with_the_reason(server: HealthServer) -> None:
    port = server.port
    server.stop()
    healthy, line = check(f"127.0.0.1:{port}")
    assert not healthy
    assert line.startswith(f"http://127.0.0.1:{port}/healthz: ") and "refused" in line


@pytest.mark.integration
def test_command_exit_code_is_the_verdict(server: HealthServer) -> None:
    def run(address: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "SYNCFLOW_HEALTH_ADDRESS": address}
        return subprocess.run(
            [sys.executable, "-m", "syncflow.probe", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    assert run(f"127.0.0.1:{server.port}").returncode == 0
    not_ready = run(f"127.0.0.1:{server.port}", "/readyz")
    assert not_ready.returncode == 1 and not_ready.stdout.endswith("/readyz: 503\n")
    unset = run("")
    assert unset.returncode == 0 and "nothing to probe" in unset.stdout
