"""Which keys still have a message in the broker: what the pump asks before it republishes a key.

A key waits in the pending zset P while its message waits in the broker. The pump republishes a
pending key only when a complete scan of the broker, begun at least ``pump_grace`` after the key's
message was sent, did not see it: so the broker never holds more than one live message per key
because of the pump, however long a backlog waits.

The scan is incremental: each pump run continues it for the time it has left, and it remembers its
place in Redis. On the Redis transport kombu keeps waiting messages in one list per queue (LPUSH at
the head, BRPOP from the tail) and delivered-but-unacked ones in the ``unacked`` hash, indexed by
delivery time. Reading a list from the head at growing offsets never misses a message that stays
in it: new messages push the others further from the head, consumed ones leave from the tail.
RabbitMQ only tells how many messages wait in a queue, so its scan completes only at a moment when
every keyed queue is empty: under a backlog that never drains, a lost message is republished only
once the backlog has drained (messages are published with confirms, so losing one takes a crash
between the queue script and the publish).
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from kombu import Connection  # type: ignore[attr-defined]
from redis import Redis

from syncflow.config import Settings
from syncflow.queue.celeryconf import broker_transport_options
from syncflow.queue.keys import InvalidKeyError, ObjectKey
from syncflow.queue.layout import BULK_QUEUE, KEYED_QUEUES, agent_prefix, broker_prefix
from syncflow.queue.redisclient import connect_redis
from syncflow.util.neterrors import display_url, network_reason

BROKER_TIMEOUT = 5.0
"""Seconds to connect to the broker, and for one of its answers, when counting messages."""

LANES = (*KEYED_QUEUES, BULK_QUEUE)
"""The Celery queues that carry keyed-task messages (syncflow never sets message priorities, so
each is one broker list)."""


Found = Callable[[list[ObjectKey], int], None]
"""Told, chunk by chunk, the keys whose message a scan saw and when that scan began (Redis ms)."""


@dataclass(frozen=True)
class ScanStep:
    """What one step of a scan did."""

    started: int
    """Redis time (ms) at which the scan began; 0 if no scan ran."""
    scanned: int
    """Messages looked at."""
    completed: bool
    """This step finished the scan: from now on ``verified()`` is ``started``."""


class MessageScan(Protocol):
    """Finds, in bounded steps, the keys whose message is still in the broker."""

    def verified(self) -> int:
        """Redis time (ms) at which the last complete scan began (0: none yet). Every message that
        was waiting then, and still is, was reported found by that scan."""

    def step(self, deadline: float, begin_before: int | None, found: Found) -> ScanStep:
        """Continue the scan in progress until ``deadline`` (``time.monotonic``), reporting what it
        finds to ``found``; with none in progress, begin one if the last complete scan began before
        ``begin_before`` (Redis ms)."""


def message_keys(message: dict[str, Any]) -> list[ObjectKey]:
    """The object keys a Celery (protocol 2) message of a keyed task carries (none for any other)."""
    headers = message.get("headers") or {}
    if not str(headers.get("task", "")).startswith("syncflow."):
        return []
    try:
        body = message["body"]
        if (message.get("properties") or {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        if not args or not all(isinstance(arg, str) for arg in args):
            return []
        return [ObjectKey.parse(arg) for arg in args]
    except (KeyError, IndexError, TypeError, ValueError, binascii.Error, InvalidKeyError):
        return []


class BrokerUnavailableError(ConnectionError):
    """The broker did not answer a count (RabbitMQ down, refusing the credentials, or too slow)."""


class Broker(Protocol):
    """What the queue asks the Celery broker: how many messages wait, and which keys they carry."""

    @property
    def scan(self) -> MessageScan:
        """The pump's scan of this broker."""

    def depths(self, queues: Sequence[str]) -> dict[str, int]:
        """Messages waiting (not yet delivered) in each of these Celery queues."""


def open_broker(redis: Redis, settings: Settings) -> Broker:
    """The broker of ``settings``; ``redis`` is the queue state's client (and the broker's, when
    the broker is that same Redis)."""
    if settings.broker_kind == "amqp":
        return AmqpBroker(redis, settings)
    if settings.celery_broker_url == settings.redis_url:
        return RedisBroker(redis, settings)
    options = {"socket_timeout": BROKER_TIMEOUT, "socket_connect_timeout": BROKER_TIMEOUT}
    return RedisBroker(connect_redis(settings.celery_broker_url, **options), settings)


class RedisBroker:
    """kombu's Redis transport: one list per queue under the agent's broker prefix."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.prefix = broker_prefix(settings.agent_name)
        self.scan = RedisBrokerScan(redis, settings)

    def depths(self, queues: Sequence[str]) -> dict[str, int]:
        with self.redis.pipeline(transaction=False) as pipe:
            for name in queues:
                pipe.llen(self.prefix + name)
            return dict(zip(queues, pipe.execute(), strict=True))


class AmqpBroker:
    """RabbitMQ: counts from passive queue declarations (a queue not declared yet holds none), on one
    connection kept for the process (beat and the pump count every second; a connection per count
    would be a RabbitMQ log line each time). A dropped connection is replaced once per count."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.url = settings.celery_broker_url
        self.options = broker_transport_options(settings)
        self.scan = EmptyQueueScan(redis, settings, self)
        self._connection: Connection | None = None
        self._lock = threading.Lock()  # e.g. two scrapes of the metrics server at once

    def depths(self, queues: Sequence[str]) -> dict[str, int]:
        with self._lock:
            try:
                return self._count(queues)
            except BrokerUnavailableError:
                return self._count(queues)  # the kept connection may have dropped: one try on a new one

    def connection(self) -> Connection:
        """The kept connection (made on first use; kombu connects it lazily)."""
        if self._connection is None:
            # No heartbeats: nothing would send them between counts; a dead connection fails the
            # next count, which then reconnects.
            transport = {**self.options, "read_timeout": BROKER_TIMEOUT, "write_timeout": BROKER_TIMEOUT}
            self._connection = Connection(  # type: ignore[no-untyped-call]
                self.url, connect_timeout=BROKER_TIMEOUT, heartbeat=0, transport_options=transport
            )
        return self._connection

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.release()  # type: ignore[no-untyped-call]
            self._connection = None

    def _count(self, queues: Sequence[str]) -> dict[str, int]:
        connection = self.connection()
        counts = dict.fromkeys(queues, 0)
        try:
            # one attempt, not kombu's lazy connect that retries after 2 s: ``depths`` tries once more
            connection.ensure_connection(max_retries=0, reraise_as_library_errors=False)  # type: ignore[no-untyped-call]
            for name in queues:
                channel = connection.channel()  # type: ignore[no-untyped-call]
                try:
                    counts[name] = int(channel.queue_declare(queue=name, passive=True).message_count)
                except connection.channel_errors:  # not declared yet (RabbitMQ closed this channel)
                    continue
                finally:
                    channel.close()
        except connection.connection_errors as exc:
            self._drop()
            reason = network_reason(exc)
            raise BrokerUnavailableError(f"RabbitMQ at {display_url(self.url)}: {reason}") from exc
        return counts


class EmptyQueueScan:
    """``MessageScan`` over a broker that only counts messages: a scan completes at a moment when
    no keyed queue holds a message, so every key still pending then had its message delivered or
    lost (a delivered one is claimed within the grace period, or republished as a harmless copy)."""

    def __init__(self, redis: Redis, settings: Settings, broker: Broker) -> None:
        self.redis = redis
        self.broker = broker
        self.state = agent_prefix(settings.agent_name) + "broker-scan"

    def verified(self) -> int:
        return int(self.redis.hget(self.state, "verified") or 0)

    def step(self, deadline: float, begin_before: int | None, found: Found) -> ScanStep:
        if begin_before is None or self.verified() >= begin_before:
            return ScanStep(0, 0, False)
        started = _redis_ms(self.redis)
        if any(self.broker.depths(LANES).values()):
            return ScanStep(0, 0, False)
        self.redis.hset(self.state, "verified", started)
        return ScanStep(started, 0, True)


class RedisBrokerScan:
    """``MessageScan`` over kombu's Redis transport: the agent's keyed-queue lists, then the unacked
    messages delivered within the grace period (older ones belong to a worker that died: kombu
    restores them after ``visibility_timeout``, and claim drops such a late copy as stale)."""

    def __init__(self, redis: Redis, settings: Settings, chunk: int | None = None) -> None:
        self.redis = redis
        self.chunk = chunk or settings.pump_batch
        self.grace = settings.pump_grace
        prefix = broker_prefix(settings.agent_name)
        self.lists = [prefix + lane for lane in LANES]
        self.unacked = prefix + "unacked"
        self.unacked_index = prefix + "unacked_index"
        self.state = agent_prefix(settings.agent_name) + "broker-scan"

    def verified(self) -> int:
        return int(self.redis.hget(self.state, "verified") or 0)

    def step(self, deadline: float, begin_before: int | None, found: Found) -> ScanStep:
        raw = {_text(k): int(v) for k, v in self.redis.hgetall(self.state).items()}
        started, lane, cursor = raw.get("started", 0), raw.get("lane", 0), raw.get("cursor", 0)
        if not started:
            if begin_before is None or raw.get("verified", 0) >= begin_before:
                return ScanStep(0, 0, False)
            started, lane, cursor = _redis_ms(self.redis), 0, 0
        scanned = 0
        while lane < len(self.lists):
            messages = self.redis.lrange(self.lists[lane], cursor, cursor + self.chunk - 1)
            scanned += len(messages)
            found(_keys(_decode(m) for m in messages), started)
            cursor += len(messages)
            if len(messages) < self.chunk:
                lane, cursor = lane + 1, 0
            if time.monotonic() >= deadline and lane < len(self.lists):
                self.redis.hset(self.state, mapping={"started": started, "lane": lane, "cursor": cursor})
                return ScanStep(started, scanned, False)
        delivered = self._recently_delivered(started)
        scanned += len(delivered)
        found(_keys(delivered), started)
        with self.redis.pipeline() as pipe:
            pipe.hdel(self.state, "started", "lane", "cursor")
            pipe.hset(self.state, "verified", started)
            pipe.execute()
        return ScanStep(started, scanned, True)

    def _recently_delivered(self, started: int) -> list[dict[str, Any]]:
        """Unacked messages delivered within the grace period before the scan began."""
        since = started / 1000 - self.grace  # kombu scores deliveries with the worker's clock (s)
        tags = cast(list[bytes], self.redis.zrangebyscore(self.unacked_index, since, "+inf"))
        found: list[dict[str, Any]] = []
        for i in range(0, len(tags), self.chunk):
            for entry in self.redis.hmget(self.unacked, tags[i : i + self.chunk]):
                decoded = _decode(entry) if entry else None
                if isinstance(decoded, list) and decoded:
                    found.append(decoded[0])  # [message, exchange, routing key]
        return found


def _decode(raw: bytes | str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _keys(messages: Iterable[Any]) -> list[ObjectKey]:
    return [key for message in messages if isinstance(message, dict) for key in message_keys(message)]


def _redis_ms(redis: Redis) -> int:
    seconds, micros = redis.time()
    return int(seconds) * 1000 + int(micros) // 1000


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
