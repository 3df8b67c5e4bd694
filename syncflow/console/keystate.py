"""The state of keys of one work queue, read by one read-only script call (docs/architecture.md §5.1).

A key may sit in several structures at once (dirty while leased, synced before and pending again);
its state is the first that holds: leased → ``running``, in X → ``parked``, in W → ``retrying``
(backing off or waiting to run again), in P or D → ``pending``, in K → ``synced``. Each state has one
*home* structure, so a scan over several structures reports every key once: where its state lives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources

from redis import Redis

from syncflow.console.models import ObjectRow, State
from syncflow.queue.layout import QueueLayout

SCANNED: dict[State | None, tuple[str, ...]] = {
    None: ("X", "W", "L", "P", "D", "K"),
    "synced": ("K",),
    "pending": ("P", "D"),
    "running": ("L",),
    "retrying": ("W",),
    "parked": ("X",),
}
"""The structures a scan walks for each state filter (None: every state)."""


def _ms(value: bytes | float | str | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(float(value) / 1000, UTC)


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value


@dataclass(frozen=True)
class KeyState:
    """Where one key is: its state, the structure that state lives in, and when it got there."""

    key: str
    state: State
    home: str
    since: datetime | None
    attempts: int
    cause: str
    synced: bool
    pending_since: datetime | None

    def row(self, queue: str) -> ObjectRow:
        """The key as a list row."""
        verb, rule, workspace, namespace, name = self.key.split("/")
        return ObjectRow(
            key=self.key,
            verb=verb,
            rule=rule,
            workspace=workspace,
            namespace=namespace,
            name=name,
            queue=queue,
            state=self.state,
            since=self.since,
            attempts=self.attempts,
            cause=self.cause,
        )


_SCRIPT = (resources.files(__package__) / "states.lua").read_text(encoding="utf-8")
_FIELDS = ("L", "X", "W", "P", "D", "K", "F", "C", "Q")
_WIDTH = 7


def read_states(redis: Redis, layout: QueueLayout, keys: Sequence[str]) -> list[KeyState | None]:
    """Each key's state in this queue (None: the queue no longer holds it): one read-only script call,
    about 2 µs of Redis time per key."""
    if not keys:
        return []
    flat = redis.register_script(_SCRIPT)([layout.key(s) for s in _FIELDS], list(keys))
    return [
        _state(key, [_text(v) for v in flat[i * _WIDTH : (i + 1) * _WIDTH]]) for i, key in enumerate(keys)
    ]


def _state(key: str, fields: list[str]) -> KeyState | None:
    state, home, since, attempts, cause, synced, queued = fields
    if not state:
        return None
    return KeyState(
        key=key,
        state=state,  # type: ignore[arg-type]
        home=home,
        since=_ms(since or None),
        attempts=int(attempts),
        cause=cause,
        synced=synced == "1",
        pending_since=_ms(queued or None),
    )
