"""Which rules have runs in progress: the leased keys of every keyed queue of one agent."""

from __future__ import annotations

from collections.abc import Collection

from redis import Redis

from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import KEYED_QUEUES, QueueLayout


def rules_with_leases(redis: Redis, agent: str, verbs: Collection[str]) -> set[str]:
    """The rules of the keys of ``verbs`` that hold a lease, live or expired and not yet requeued
    (one pipelined round trip; a lease set holds only the keys being run)."""
    with redis.pipeline(transaction=False) as pipe:
        for name in KEYED_QUEUES:
            pipe.zrange(QueueLayout(agent, name).key("L"), 0, -1)
        leased = pipe.execute()
    keys = (ObjectKey.parse(m.decode() if isinstance(m, bytes) else m) for members in leased for m in members)
    return {key.rule for key in keys if key.verb in verbs}
