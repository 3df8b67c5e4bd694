"""Reading an agent's work queues in Redis, so a test asserts on the queue's state rather than on the
log lines a run printed about it (layout: syncflow.queue.layout; scripts: syncflow/queue/common.lua)."""

from __future__ import annotations

import json
from typing import Any

from redis import Redis

from syncflow.queue.layout import QueueLayout


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def failures(redis: Redis, agent: str, match: str = "*", queue: str = "sync") -> dict[str, dict[str, Any]]:
    """The failure records of the keys of ``queue`` matching the glob ``match`` that back off or are
    parked: key → the last error as the queue stored it (``type``, ``error``, ``outcome``, ``cause``)
    with the failed ``attempts``. A key's record goes once a run of it succeeds."""
    layout = QueueLayout(agent, queue)
    records: dict[str, dict[str, Any]] = {}
    for raw, error in redis.hscan_iter(layout.key("E"), match=match, count=1000):
        key = _text(raw)
        attempts = redis.hget(layout.key("F"), key)
        records[key] = {**json.loads(_text(error)), "attempts": int(_text(attempts)) if attempts else 0}
    return records


def holds(redis: Redis, agent: str, key: str, queue: str = "sync") -> bool:
    """Whether ``queue`` holds ``key``: dirty, pending, leased, delayed, or with a failure record."""
    layout = QueueLayout(agent, queue)
    return bool(
        redis.sismember(layout.key("D"), key)
        or any(redis.zscore(layout.key(zset), key) is not None for zset in ("P", "L", "W"))
        or redis.hexists(layout.key("F"), key)
        or redis.hexists(layout.key("X"), key)
    )
