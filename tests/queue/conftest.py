"""Fixtures for the queue tests: Redis (fakeredis[lua] and the real server), settings with a unique
agent name per test, a private redis-server for restart tests, and worker/beat processes."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import json
import os
import socket
import subprocess
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import fakeredis
import pytest
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from syncflow.config import Settings, load_settings
from syncflow.queue.broker import message_keys
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import broker_prefix
from syncflow.queue.redisclient import connect_redis
from syncflow.queue.registry import register_verb
from syncflow.queue.service import QueueService
from syncflow.runtime.stack import free_port
from tests.queue.live import Live
from tests.support.processes import REPO, SyncflowProcesses
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for

# The session's Redis (tests/conftest.py provided it before this module was imported).
REAL_REDIS_URL = session_redis_url()

register_verb("sync", "sync", names_rule=True)
register_verb("status", "status", names_rule=True)
register_verb("related", "sync", names_rule=True)


def unique_agent() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


def delete_agent_keys(redis: Redis, agent: str) -> None:
    """Remove every key of one agent (queue structures, budgets, broker lists)."""
    for pattern in (f"sf:{agent}:*", f"sf:{{{agent}:*"):
        keys = list(redis.scan_iter(match=pattern, count=1000))
        if keys:
            redis.delete(*keys)


@pytest.fixture(params=["fake", "real"])
def redis(request: pytest.FixtureRequest) -> Iterator[Redis]:
    """A Redis client: fakeredis with Lua, or the real server (the same tests run on both)."""
    if request.param == "fake":
        yield fakeredis.FakeRedis()
        return
    client = Redis.from_url(session_redis_url())
    yield client
    client.close()


@pytest.fixture
def settings(redis: Redis) -> Iterator[Settings]:
    """Settings with a unique agent; its keys are removed afterwards."""
    agent = unique_agent()
    yield load_settings(agent_name=agent, max_attempts=3, pump_grace=60)
    delete_agent_keys(redis, agent)


class Sent(list[tuple[ObjectKey, str]]):
    """Records published messages instead of sending them; ``together``: the keys of each send asked
    to go together."""

    def __init__(self) -> None:
        super().__init__()
        self.together: list[list[ObjectKey]] = []

    def __call__(self, messages: Sequence[tuple[ObjectKey, str]], /, *, together: bool = False) -> None:
        self.extend(messages)
        if together:
            self.together.append([key for key, _ in messages])


@pytest.fixture
def sent() -> Sent:
    return Sent()


def counted_add_each(service: QueueService, queue: str = "sync") -> list[int]:
    """Count the ``add_each`` script calls of ``queue`` from now on: the list gets each call's number
    of arguments."""
    work_queue = service.queues[queue]
    script = work_queue._scripts.add_each
    calls: list[int] = []

    def counted(keys: Any, args: list[Any]) -> Any:
        calls.append(len(args))
        return script(keys, args)

    work_queue._scripts = dataclasses.replace(work_queue._scripts, add_each=counted)  # type: ignore[arg-type]
    return calls


TEMPLATE_KEY = ObjectKey("sync", "template", "root:ws", "ns", "name")


@functools.cache
def celery_message_template() -> dict[str, Any]:
    """One keyed-task message exactly as Celery's Redis transport stores it, published for real."""
    from syncflow.tasks import CeleryPublisher, create_app

    settings = load_settings(agent_name=unique_agent(), redis_url=REAL_REDIS_URL)
    client = Redis.from_url(REAL_REDIS_URL)
    try:
        CeleryPublisher(create_app(settings))([(TEMPLATE_KEY, "sync")])
        raw = client.rpop(broker_prefix(settings.agent_name) + "sync")
    finally:
        delete_agent_keys(client, settings.agent_name)
        client.close()
    assert isinstance(raw, bytes)
    message: dict[str, Any] = json.loads(raw)
    return message


def celery_message(key: ObjectKey, queue: str) -> str:
    """The stored message of a task for ``key`` on ``queue``: the real template, re-keyed."""
    return celery_message_keys([key], queue)


@functools.cache
def _template_text() -> str:
    """The template as JSON: parsing it gives a fresh copy several times faster than a deep copy, which
    counts when a test stores 100k messages."""
    return json.dumps(celery_message_template())


def celery_message_keys(keys: Sequence[ObjectKey], queue: str) -> str:
    """The stored message of a task carrying ``keys`` on ``queue`` (the real template, re-keyed)."""
    message: dict[str, Any] = json.loads(_template_text())
    task_id = str(uuid.uuid4())
    body = json.loads(base64.b64decode(message["body"]))
    body[0] = [str(key) for key in keys]
    message["body"] = base64.b64encode(json.dumps(body).encode()).decode()
    task = keys[0].task_name if keys else TEMPLATE_KEY.task_name
    message["headers"].update(task=task, id=task_id, root_id=task_id, argsrepr=repr(body[0]))
    message["properties"].update(correlation_id=task_id, delivery_tag=str(uuid.uuid4()))
    message["properties"]["delivery_info"]["routing_key"] = queue
    return json.dumps(message)


class BrokerLists:
    """A publisher that stores real-format Celery messages in an agent's broker lists on any Redis
    (fake or real), as kombu's Redis transport does (LPUSH; workers BRPOP from the other end)."""

    def __init__(self, redis: Redis, agent: str) -> None:
        self.redis = redis
        self.prefix = broker_prefix(agent)

    def __call__(self, messages: Sequence[tuple[ObjectKey, str]], /, *, together: bool = False) -> None:
        if together:
            for queue in dict.fromkeys(queue for _, queue in messages):
                self.push_together([key for key, q in messages if q == queue], queue)
            return
        with self.redis.pipeline(transaction=False) as pipe:
            for key, queue in messages:
                pipe.lpush(self.prefix + queue, celery_message(key, queue))
            pipe.execute()

    def push_together(self, keys: Sequence[ObjectKey], queue: str = "sync") -> None:
        """Store one message carrying all of ``keys``, as ``CeleryPublisher`` packs them."""
        self.redis.lpush(self.prefix + queue, celery_message_keys(keys, queue))

    def length(self, queue: str = "sync") -> int:
        return int(self.redis.llen(self.prefix + queue))

    def raw(self, key: ObjectKey, queue: str = "sync") -> list[bytes]:
        """The stored messages of ``key`` on ``queue``."""
        return [
            raw
            for raw in self.redis.lrange(self.prefix + queue, 0, -1)
            if key in message_keys(json.loads(raw))
        ]

    def lose(self, key: ObjectKey, queue: str = "sync") -> None:
        """Drop the key's messages, as a broker failover or an eviction would."""
        for raw in self.raw(key, queue):
            self.redis.lrem(self.prefix + queue, 0, raw)

    def deliver(self, key: ObjectKey, delivered_at: float, queue: str = "sync") -> None:
        """Move the key's message to kombu's unacked hash, as a worker's BRPOP does (at ``delivered_at``,
        a Unix time of the worker's clock)."""
        [raw] = self.raw(key, queue)
        self.redis.lrem(self.prefix + queue, 0, raw)
        tag = json.loads(raw)["properties"]["delivery_tag"]
        self.redis.hset(self.prefix + "unacked", tag, json.dumps([json.loads(raw), "", queue]))
        self.redis.zadd(self.prefix + "unacked_index", {tag: delivered_at})


@pytest.fixture
def broker(redis: Redis, settings: Settings) -> BrokerLists:
    return BrokerLists(redis, settings.agent_name)


@pytest.fixture
def service(redis: Redis, settings: Settings, sent: Sent) -> QueueService:
    return QueueService(redis, settings, sent)


def cluster_port() -> int:
    """A free port whose cluster bus port (the port + 10000) is free too."""
    while True:
        port = free_port()
        if port + 10000 < 65536:
            with socket.socket() as bus, contextlib.suppress(OSError):
                bus.bind(("127.0.0.1", port + 10000))
                return port


class RedisServer:
    """A private redis-server on a free port (for restart and failover tests), or one node of a
    Redis Cluster (``cluster``: the node starts empty, with no slots)."""

    def __init__(self, directory: Path, *, cluster: bool = False) -> None:
        self.directory = directory
        self.port = cluster_port() if cluster else free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.options = (
            ["--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{self.port}.conf"]
            if cluster
            else []
        )

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
                *self.options,
            ],
            stdout=subprocess.DEVNULL,
        )
        client = Redis(port=self.port)
        wait_for(lambda: _pings(client), timeout=10, what="private redis-server to answer")
        client.close()

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None


def _pings(client: Redis) -> bool:
    try:
        return bool(client.ping())
    except OSError:
        return False
    except Exception:
        return False


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A private redis-server, killed afterwards."""
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.kill()


class Processes(SyncflowProcesses):
    """syncflow worker/beat subprocesses of the queue tests."""

    def worker(self, name: str = "worker", *extra: str) -> subprocess.Popen[bytes]:
        return self.start(name, "worker", "-c", "2", "-I", "tests.queue.handlers", "-n", f"{name}@%h", *extra)

    def beat(self) -> subprocess.Popen[bytes]:
        return self.start("beat", "beat", "-s", str(self.log_dir / "beat-schedule"))


@pytest.fixture
def processes_factory(tmp_path: Path) -> Iterator[Callable[[Settings], Processes]]:
    """Builds a ``Processes`` whose children use the given settings; all are killed afterwards."""
    made: list[Processes] = []

    def make(settings: Settings) -> Processes:
        env = {**os.environ, "PYTHONPATH": str(REPO), "SYNCFLOW_PREFLIGHT": "false"}  # no clusters here
        for name, value in settings.model_dump(mode="json", exclude_defaults=True).items():
            env[f"SYNCFLOW_{name.upper()}"] = (
                json.dumps(value) if isinstance(value, dict | list) else str(value)
            )
        processes = Processes(env, tmp_path)
        made.append(processes)
        return processes

    yield make
    for processes in made:
        processes.stop_all()


@pytest.fixture
def make_live(processes_factory: Callable[[Settings], Processes]) -> Iterator[Callable[..., Live]]:
    """Builds live agents (short time limits, unique names); their processes and keys go afterwards."""
    made: list[Live] = []

    def make(redis_url: str | None = None, **overrides: Any) -> Live:
        from syncflow.tasks import CeleryPublisher, create_app

        redis_url = redis_url or session_redis_url()
        tuning: dict[str, Any] = {
            "agent_name": unique_agent(),
            "redis_url": redis_url,
            "task_time_limit": 2,
            "lease_ttl": 3,
            "visibility_timeout": 10,
            "pump_grace": 5,
            **overrides,
        }
        settings = load_settings(**tuning)
        service = QueueService(connect_redis(redis_url), settings, CeleryPublisher(create_app(settings)))
        live = Live(settings, service, processes_factory(settings))
        made.append(live)
        return live

    yield make
    for live in made:
        live.processes.stop_all()
        with contextlib.suppress(RedisConnectionError):  # a private redis-server may be gone already
            delete_agent_keys(live.redis, live.settings.agent_name)
