"""The resourceVersions of syncflow's own writes, so watchers drop their echoes (DESIGN §5).

Workers record each write; the watcher asks before enqueueing an event. Entries expire quickly:
a missed echo only costs one idempotent reconcile.
"""

from __future__ import annotations

from redis import Redis

from syncflow.kube.refs import ObjectRef
from syncflow.queue.layout import agent_prefix

ECHO_TTL_SECONDS = 300


class OwnWrites:
    """Records and recognises the resourceVersions of our own writes, per side and object."""

    def __init__(self, redis: Redis, agent: str) -> None:
        self.redis = redis
        self.prefix = f"{agent_prefix(agent)}own:"

    def _key(self, side: str, ref: ObjectRef) -> str:
        return f"{self.prefix}{side}:{ref.encode()}"

    def record(self, side: str, ref: ObjectRef, resource_version: str) -> None:
        """Remember that ``resource_version`` of ``ref`` on ``side`` is our own write."""
        if resource_version:
            self.redis.set(self._key(side, ref), resource_version, ex=ECHO_TTL_SECONDS)

    def is_own(self, side: str, ref: ObjectRef, resource_version: str) -> bool:
        """Whether an event at ``resource_version`` is the echo of our last write."""
        stored = self.redis.get(self._key(side, ref))
        if isinstance(stored, bytes):
            stored = stored.decode()
        return stored == resource_version
