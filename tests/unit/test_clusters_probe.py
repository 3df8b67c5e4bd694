"""A Cluster's probe: its status says in a few fixed words what failed, never what the server said
(the server is any URL a tenant names)."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from ipaddress import ip_network
from typing import Any

import pytest
import yaml

from syncflow.kube import addresses
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.clusters import clients, controller
from syncflow.modes.clusters.clients import ClustersEndpoints
from syncflow.modes.clusters.controller import probe
from syncflow.sync.endpoints import ClientCache

SERVER_TEXT = "internal-" + "x" * 460
"""What an internal service might answer (read back through a Cluster's status before)."""


class _Answers(http.server.BaseHTTPRequestHandler):
    """Answers every GET with ``status`` and ``body``, or with ``raw`` bytes instead of HTTP."""

    status = 403
    body = b""
    raw = b""

    def do_GET(self) -> None:
        if self.raw:
            self.wfile.write(self.raw)
            return
        self.send_response(self.status, f"Reason {SERVER_TEXT}")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request log."""


@pytest.fixture
def server() -> Iterator[str]:
    """The URL of a server answering as ``_Answers`` says (reset for each test)."""
    _Answers.status, _Answers.body, _Answers.raw = 403, b"", b""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    # a short poll: shutdown() waits for the loop's next look (0.5 s by default) at every teardown
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _Workspace:
    """The one Cluster ``c`` of a workspace, as ``get_or_none`` reads it."""

    def __init__(self, kubeconfig: str) -> None:
        self.cluster = {"metadata": {"name": "c", "uid": "u"}, "spec": {"kubeconfig": kubeconfig}}

    def get(self, path: str) -> dict[str, Any]:
        return self.cluster


def kubeconfig(server: str, **cluster: Any) -> str:
    return yaml.safe_dump(
        {
            "current-context": "c",
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            "clusters": [{"name": "k", "cluster": {"server": server, **cluster}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
        }
    )


def probed(text: str, allow_link_local: bool = False) -> controller.Probe:
    workspace: Any = _Workspace(text)
    loader = clients.from_clusters(
        workspace, lambda api, name: JsonApi(api), allow_link_local=allow_link_local
    )
    return probe(ClustersEndpoints(workspace, ClientCache(loader)), "c")


@pytest.mark.parametrize(
    ("status", "body", "reason", "message"),
    [
        (403, b'{"message": "%s"}', "Unauthorized", "the cluster answers 403 Forbidden"),
        (500, b"%s", "Unreachable", "the cluster answers 500 Internal Server Error"),
        (599, b"%s", "Unreachable", "the cluster answers 599"),
        (200, b"%s", "Unreachable", "the probe failed: the answer is not JSON"),
    ],
)
def test_an_answer_is_reported_by_its_status_code_only(
    server: str, status: int, body: bytes, reason: str, message: str
) -> None:
    _Answers.status, _Answers.body = status, body.replace(b"%s", SERVER_TEXT.encode())
    found = probed(kubeconfig(f"http://{server}"))
    assert (found.ok, found.reason, found.message) == (False, reason, message)


def test_a_failure_to_answer_is_reported_by_its_kind_only(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _Answers.raw = f"{SERVER_TEXT}\r\n\r\n".encode()
    assert probed(kubeconfig(f"http://{server}")).message == "the probe failed: not an HTTP answer"
    tls = kubeconfig(f"https://{server}", **{"insecure-skip-tls-verify": True})
    assert probed(tls).message == "the probe failed: TLS handshake failed"
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    assert probed(kubeconfig(f"http://127.0.0.1:{port}")).message == "the probe failed: connection refused"
    monkeypatch.setattr(controller, "PROBE_TIMEOUT", (0.5, 0.2))
    with socket.socket() as silent:  # connections are accepted by the kernel, never answered
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        found = probed(kubeconfig(f"http://127.0.0.1:{silent.getsockname()[1]}"))
    assert (found.reason, found.message) == ("Unreachable", "the probe failed: timeout")


def test_a_name_that_resolves_to_a_refused_address_is_refused_when_it_connects(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # loopback stands for link-local here: "localhost" passes the URL check, its address does not
    loopback = (ip_network("127.0.0.0/8"), ip_network("::1/128"))
    monkeypatch.setattr(addresses, "REFUSED_NETWORKS", (*addresses.REFUSED_NETWORKS, *loopback))
    port = server.rpartition(":")[2]
    for text in (
        kubeconfig(f"http://localhost:{port}"),
        kubeconfig("http://unused.example", **{"proxy-url": f"http://localhost:{port}"}),
    ):
        found = probed(text)
        assert (found.reason, found.message) == (
            "InvalidKubeconfig",
            "the cluster's server or proxy-url resolves to a link-local or metadata address: "
            "refused (an operator may allow it with --allow-link-local-servers)",
        )
    assert probed(kubeconfig(f"http://localhost:{port}"), allow_link_local=True).reason == "Unauthorized"
