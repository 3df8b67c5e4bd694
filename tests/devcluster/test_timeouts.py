"""Issue 10 item 8: kube's request deadlines, and clients with timeouts against a paused server."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest
from kubernetes import client, config
from urllib3.exceptions import HTTPError as Urllib3Error

from tests.support.devcluster import DevclusterProcess, start_devcluster

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """A devcluster whose requests may take one second."""
    server = start_devcluster(tmp_path_factory.mktemp("quick"), "--request-timeout", "1s")
    yield server
    server.stop()


def _stalled_post(server: DevclusterProcess, query: str = "") -> tuple[float, str, dict[str, object]]:
    """POST whose body never arrives; returns (seconds until the answer, status line, JSON body)."""
    url = urlparse(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        started = time.monotonic()
        sock.sendall(
            f"POST /api/v1/namespaces/default/configmaps{query} HTTP/1.1\r\nHost: x\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode()
        )
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        elapsed = time.monotonic() - started
    head, _, body = answer.partition(b"\r\n\r\n")
    return elapsed, head.split(b"\r\n")[0].decode(), json.loads(body)


def test_request_past_the_server_deadline_gets_504(quick: DevclusterProcess) -> None:
    elapsed, status_line, body = _stalled_post(quick)
    assert status_line.startswith("HTTP/1.1 504")
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Timeout: request did not complete within requested timeout - context deadline exceeded",
        "reason": "Timeout",
        "code": 504,
    }
    assert 0.9 <= elapsed < 10


def test_timeout_parameter_shortens_the_deadline(devcluster: DevclusterProcess) -> None:
    elapsed, status_line, body = _stalled_post(devcluster, "?timeout=300ms")
    assert status_line.startswith("HTTP/1.1 504") and body["reason"] == "Timeout"
    assert elapsed < 10  # the session devcluster's own deadline is 60 s


def test_watch_ends_at_its_timeout_seconds_not_the_request_deadline(quick: DevclusterProcess) -> None:
    api = config.new_client_from_config(config_file=str(quick.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        started = time.monotonic()
        response = core.list_namespaced_config_map(
            "default", watch=True, timeout_seconds=3, _preload_content=False
        )
        response.read()  # the stream ends when the watch times out
        assert 2.5 <= time.monotonic() - started < 15
        listed = core.list_namespaced_config_map("default", timeout_seconds=1)
        assert listed.metadata.resource_version
    finally:
        api.close()


def test_paused_server_does_not_hang_a_client_with_a_timeout(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    server = start_devcluster(tmp_path_factory.mktemp("paused"))
    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    core = client.CoreV1Api(api)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="p-"))
    try:
        core.create_namespaced_config_map("default", body, _request_timeout=5)
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(Urllib3Error):
                core.create_namespaced_config_map("default", body, _request_timeout=(2, 2))
            assert time.monotonic() - started < 6
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        created = core.create_namespaced_config_map("default", body, _request_timeout=5)
        assert created.metadata.name.startswith("p-")
    finally:
        api.close()
        server.stop()
