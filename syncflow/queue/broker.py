"""Which keys still have a message in the broker: what the pump asks before it republishes a key.

A key waits in the pending zset P while its message waits in the broker. The pump republishes a
pending key only when a complete scan of the broker, begun at least ``pump_grace`` after the key's
message was sent, did not see it: so the broker never holds more than one live message per key
because of the pump, however long a backlog waits.

The scan is incremental: each pump run continues it for the time it has left, and it remembers its
place in Redis. On the Redis transport kombu keeps waiting messages in one list per queue (LPUSH at
the head, BRPOP from the tail) and delivered-but-unacked ones in the ``unacked`` hash, indexed by
delivery time. Reading a list from the head at growing offsets never misses a message that stays
in it: new messages push the others further from the head, consumed ones leave from the tail. A
broker that can only tell whether a queue is empty (e.g. RabbitMQ) implements ``MessageScan`` by
completing a scan only when every queue is empty.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, cast

from redis import Redis

from syncflow.config import Settings
from syncflow.keys import InvalidKeyError, ObjectKey
from syncflow.queue.layout import BULK_QUEUE, KEYED_QUEUES, agent_prefix, broker_prefix

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


def message_key(message: dict[str, Any]) -> ObjectKey | None:
    """The object key a Celery (protocol 2) message of a keyed task carries, or None."""
    headers = message.get("headers") or {}
    if not str(headers.get("task", "")).startswith("syncflow."):
        return None
    try:
        body = message["body"]
        if (message.get("properties") or {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        return ObjectKey.parse(args[0]) if len(args) == 1 and isinstance(args[0], str) else None
    except (KeyError, IndexError, TypeError, ValueError, binascii.Error, InvalidKeyError):
        return None


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
    return [
        key for message in messages if isinstance(message, dict) and (key := message_key(message)) is not None
    ]


def _redis_ms(redis: Redis) -> int:
    seconds, micros = redis.time()
    return int(seconds) * 1000 + int(micros) // 1000


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
