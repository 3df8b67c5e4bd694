"""Fixtures for the console tests: the session's real Redis, a unique agent per test (its keys removed
afterwards), a queue service whose messages are recorded, and keys put into each state by the queue's
own scripts."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from redis import Redis
from starlette.testclient import TestClient

from syncflow.config import Settings, load_settings
from syncflow.console.filters import Scope
from syncflow.console.reader import Reader
from syncflow.console.security import Auth
from syncflow.console.web import create_app
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import agent_patterns
from syncflow.queue.registry import register_verb
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Outcome, RunEnd
from tests.support.redis import session_redis_url

register_verb("sync", "sync", names_rule=True)
register_verb("status", "status", names_rule=True)
register_verb("related", "sync", names_rule=True)


class Sent(list[tuple[ObjectKey, str]]):
    """Records published messages instead of sending them."""

    def __call__(self, messages: Sequence[tuple[ObjectKey, str]], /, *, together: bool = False) -> None:
        self.extend(messages)


def delete_agent_keys(redis: Redis, agent: str) -> None:
    """Remove every key of one agent (never the whole database)."""
    for pattern in agent_patterns(agent):
        names = list(redis.scan_iter(match=pattern, count=1000))
        if names:
            redis.delete(*names)


@pytest.fixture
def redis() -> Iterator[Redis]:
    client = Redis.from_url(session_redis_url(), socket_timeout=10)
    yield client
    client.close()


@pytest.fixture
def settings(redis: Redis) -> Iterator[Settings]:
    agent = f"c{uuid.uuid4().hex[:10]}"
    yield load_settings(agent_name=agent, max_attempts=3)
    delete_agent_keys(redis, agent)


@pytest.fixture
def sent() -> Sent:
    return Sent()


@pytest.fixture
def service(redis: Redis, settings: Settings, sent: Sent) -> QueueService:
    return QueueService(redis, settings, sent)


FORBIDDEN = {
    "task": "abc-123",
    "type": "ApiException",
    "error": "403 Forbidden: databases.example.io is forbidden",
    "outcome": "permanent",
    "cause": "forbidden:root:team-a",
    "status": 403,
    "reason": "Forbidden",
    "traceback": "",
}


def put(service: QueueService, key: str, state: str, *, cause: str = "forbidden:root:team-a") -> ObjectKey:
    """Bring ``key`` into ``state`` (synced, pending, running, retrying, parked, gone) the way runs do."""
    parsed = ObjectKey.parse(key)
    queue = service.queue_for(parsed)
    queue.add(parsed)
    if state == "pending":
        return parsed
    token = f"task-{uuid.uuid4().hex[:6]}#1"
    queue.take(parsed, token)
    if state == "running":
        return parsed
    payload = json.dumps({**FORBIDDEN, "cause": cause})
    ends = {
        "synced": RunEnd(Outcome.OK),
        "gone": RunEnd(Outcome.OK, gone=True),
        "retrying": RunEnd(Outcome.TRANSIENT, error=payload, cause=cause),
        "parked": RunEnd(Outcome.PERMANENT, error=payload, cause=cause),
    }
    queue.finish(parsed, token, ends[state])
    return parsed


def client_for(reader: Reader, auth: Auth | None = None) -> TestClient:
    """A test client of the console app (base URL http://testserver)."""
    return TestClient(create_app(reader, auth))


@pytest.fixture
def reader(service: QueueService) -> Reader:
    return Reader(service, Scope())


LATENCIES = (
    {("dbs", "spec"): [0.01] * 50 + [0.3] * 46 + [4.0] * 4, ("dbs", "status"): [0.01] * 10},
    {("dbs", "spec"): [0.01] * 100, ("certs", "spec"): [2.0] * 20},
)
"""Seconds each of two worker processes observed, by (rule, direction)."""


@pytest.fixture
def metrics_urls() -> Iterator[list[str]]:
    """Two /metrics endpoints with the latency histogram (as two worker processes expose it), observed
    as ``LATENCIES`` says."""
    bodies = []
    for observed in LATENCIES:
        registry = CollectorRegistry()
        histogram = Histogram(
            "syncflow_sync_latency_seconds",
            "latency",
            ["mode", "rule", "direction"],
            buckets=(0.005, 0.025, 0.1, 0.5, 1, 5, 10),
            registry=registry,
        )
        for (rule, direction), seconds in observed.items():
            for value in seconds:
                histogram.labels("publish", rule, direction).observe(value)
        bodies.append(generate_latest(registry))
    servers = []
    for body in bodies:

        class Handler(BaseHTTPRequestHandler):
            payload = body

            def do_GET(self) -> None:
                self.send_response(200)
                self.end_headers()
                self.wfile.write(self.payload)

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    yield [f"http://127.0.0.1:{s.server_address[1]}/metrics" for s in servers]
    for server in servers:
        server.shutdown()
        server.server_close()
