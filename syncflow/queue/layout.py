"""Redis key names. Every structure of one work queue shares one hash tag, so the scripts work on
Redis Cluster, and every name starts with the agent's prefix, so several agents share one Redis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis import Redis

CONTROL_QUEUE = "control"
STATUS_QUEUE = "status"
"""The work queue, and Celery queue, of the keys that return status."""
KEYED_QUEUES = ("sync", STATUS_QUEUE, CONTROL_QUEUE)
"""Work queues with the keyed Lua structures; each is also the Celery queue of its event lane.
``control`` carries a mode's control-plane keys (heartbeats, type discovery), so a flood of object
events never delays them."""
BULK_QUEUE = "sync-bulk"
"""Celery queue of the bulk lane (relists, resync) of every keyed queue."""
PERIODIC_QUEUE = "periodic"
CELERY_QUEUES = ("sync", BULK_QUEUE, STATUS_QUEUE, CONTROL_QUEUE, PERIODIC_QUEUE)
"""Every Celery queue syncflow uses."""

# Order matters: the Lua prelude (common.lua) reads KEYS in this order, then the shared ones.
STRUCTURES = ("D", "P", "BK", "L", "O", "W", "F", "T", "X", "E", "S", "N", "C", "CX", "LT", "SN", "Q", "K")
SHARED_STRUCTURES = ("own", "own-expiry", "rules")
"""Shared by the agent's queues: its own writes (syncflow.kube.echoes: an echo lands on any queue) and its
rule registry (syncflow.sync.registry), which a claim reads for the key's rule."""


def agent_prefix(agent: str) -> str:
    """Prefix of every Redis key of one agent."""
    return f"sf:{agent}:"


def agent_patterns(agent: str) -> tuple[str, str]:
    """Glob patterns matching every Redis key of one agent: its prefix and its hash-tagged structures."""
    return f"{agent_prefix(agent)}*", f"sf:{{{agent}:*"


def forget_agent(redis: Redis, agent: str) -> int:
    """Delete every key of one agent (never the whole database); returns how many were deleted."""
    deleted = 0
    for pattern in agent_patterns(agent):
        keys = list(redis.scan_iter(match=pattern, count=1000))
        if keys:
            deleted += int(redis.delete(*keys))
    return deleted


def broker_prefix(agent: str) -> str:
    """kombu's ``global_keyprefix``: the agent's broker lists and channels."""
    return f"{agent_prefix(agent)}celery:"


@dataclass(frozen=True)
class QueueLayout:
    """Key names of one work queue. All queues of one agent share one hash tag (one Redis Cluster
    slot), so a script can see the agent's own writes whatever queue an echo lands on."""

    agent: str
    queue: str

    @property
    def tag(self) -> str:
        return f"sf:{{{self.agent}:queues}}"

    def key(self, structure: str) -> str:
        if structure in SHARED_STRUCTURES:
            return f"{self.tag}:{structure}"
        return f"{self.tag}:{self.queue}:{structure}"

    @property
    def keys(self) -> list[str]:
        """All structures, in the order the scripts expect them."""
        return [self.key(s) for s in (*STRUCTURES, *SHARED_STRUCTURES)]


def registry_key(agent: str) -> str:
    """The agent's rule registry (a hash by rule name), in the slot of its queues."""
    return QueueLayout(agent, "").key("rules")


def budget_key(agent: str, endpoint: str) -> str:
    """The token bucket of one API endpoint."""
    return f"sf:{{{agent}:budget:{endpoint}}}"


def pump_lock_key(agent: str) -> str:
    """The lock each pump run holds, so two runs never overlap."""
    return f"{agent_prefix(agent)}pump-lock"


def pump_last_key(agent: str) -> str:
    """Redis time (ms) of the last pump run: beat and a worker on the periodic queue are alive."""
    return f"{agent_prefix(agent)}pump-last"
