"""A watch stream takes, in one read, every chunk of the response that has arrived, and never waits for
one that has not: a server sends each flush of its stream as a chunk, and a busy one flushes several
at once (so their events share one add to the queue)."""

from __future__ import annotations

import http.server
import json
import queue
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import urllib3

from syncflow.devcluster.tls import ServingCertificate, make_serving_certificate
from syncflow.kube.stream import GuardedStream


def _event(name: str) -> bytes:
    return json.dumps({"type": "ADDED", "object": {"metadata": {"name": name}}}).encode() + b"\n"


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


class _Streamer(http.server.BaseHTTPRequestHandler):
    """Answers a watch with the chunks the test hands it, each batch in one write; ``None`` ends it."""

    protocol_version = "HTTP/1.1"
    batches: queue.Queue[list[bytes] | None]

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        while (batch := self.batches.get(timeout=30)) is not None:
            self.wfile.write(b"".join(_chunk(data) for data in batch))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def certificate() -> ServingCertificate:
    return make_serving_certificate("127.0.0.1")


@dataclass
class Server:
    """A streaming server and a pool of clients that trust it."""

    url: str
    batches: queue.Queue[list[bytes] | None]
    pool: urllib3.PoolManager


@pytest.fixture(params=["http", "https"])
def server(request: pytest.FixtureRequest, certificate: ServingCertificate) -> Iterator[Server]:
    """The server over plain HTTP and over TLS (where received bytes wait decrypted in the TLS layer)."""
    batches: queue.Queue[list[bytes] | None] = queue.Queue()
    handler = type("Streamer", (_Streamer,), {"batches": batches})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    pool = urllib3.PoolManager()
    if request.param == "https":
        httpd.socket = certificate.ssl_context().wrap_socket(httpd.socket, server_side=True)
        pool = urllib3.PoolManager(ssl_context=ssl.create_default_context(cadata=certificate.ca_pem.decode()))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield Server(f"{request.param}://127.0.0.1:{httpd.server_address[1]}/watch", batches, pool)
    batches.put(None)
    httpd.shutdown()
    httpd.server_close()
    pool.clear()


def _reads(server: Server) -> tuple[queue.Queue[list[str]], threading.Event]:
    """Read the server's stream in a thread; each read's event names go to the queue returned."""
    response = server.pool.request("GET", server.url, preload_content=False, timeout=30)
    stop = threading.Event()
    stream = GuardedStream(response, stop, inactivity=30, lifetime=60)
    reads: queue.Queue[list[str]] = queue.Queue()

    def run() -> None:
        for events in stream.reads():
            reads.put([event["object"]["metadata"]["name"] for event in events])

    threading.Thread(target=run, daemon=True).start()
    return reads, stop


def test_the_chunks_that_arrived_together_are_one_read(server: Server) -> None:
    reads, stop = _reads(server)
    server.batches.put([_event("a"), _event("b"), _event("c") + _event("d")])
    assert reads.get(timeout=10) == ["a", "b", "c", "d"]
    stop.set()


def test_a_read_does_not_wait_for_a_chunk_that_has_not_arrived(server: Server) -> None:
    """The next chunk is sent only once the first one's read is seen: a read that waited for it (as for
    the line break that ends a chunk, already received, followed by a chunk size not yet sent) would
    never come."""
    reads, stop = _reads(server)
    server.batches.put([_event("first")])
    assert reads.get(timeout=10) == ["first"]
    server.batches.put([_event("second")])
    assert reads.get(timeout=10) == ["second"]
    stop.set()


def test_an_event_split_over_chunks_is_whole_in_its_read(server: Server) -> None:
    reads, stop = _reads(server)
    line = _event("split")
    server.batches.put([line[:10], line[10:25]])
    server.batches.put([line[25:]])
    assert reads.get(timeout=10) == ["split"]
    stop.set()
