"""What the queue remembers of one key, from whichever queue holds it (one pipeline for all queues)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from redis import Redis

from syncflow.console.keystate import KeyState, read_states
from syncflow.console.models import History, LastError
from syncflow.queue.execute import task_of
from syncflow.queue.layout import KEYED_QUEUES, QueueLayout

_STATUS = re.compile(r"^(\d{3}) ([^:]+):")
"""An API error as ``describe`` words it: ``403 Forbidden: …``."""


def _text(value: bytes | str | None) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else value


def _ms(value: bytes | str | float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(float(value) / 1000, UTC)


def last_error(payload: str | None) -> LastError | None:
    """The failure record ``done`` stored (``syncflow.queue.execute``), as the views show it."""
    if not payload:
        return None
    try:
        record = json.loads(payload)
    except ValueError:
        return LastError(message=payload)
    message = str(record.get("error") or "")
    status, reason = record.get("status"), str(record.get("reason") or "")
    if status is None and (found := _STATUS.match(message)):
        status, reason = int(found.group(1)), found.group(2)
    return LastError(
        task=str(record.get("task") or ""),
        type=str(record.get("type") or ""),
        message=message,
        status=int(status) if status is not None else None,
        reason=reason,
        cause=str(record.get("cause") or ""),
        outcome=str(record.get("outcome") or ""),
        traceback=str(record.get("traceback") or ""),
    )


@dataclass(frozen=True)
class Found:
    """A key's state in its queue and its history."""

    queue: str
    state: KeyState
    history: History


def find(redis: Redis, agent: str, key: str) -> Found | None:
    """The key's state and history in the queue that holds it; None when no queue does."""
    for queue in KEYED_QUEUES:
        layout = QueueLayout(agent, queue)
        [state] = read_states(redis, layout, [key])
        if state is None:
            continue
        k = layout.key
        with redis.pipeline(transaction=False) as pipe:
            for structure in ("T", "E", "N", "K", "X", "O"):
                pipe.hget(k(structure), key)
            pipe.zscore(k("W"), key)
            first, error, strikes, synced, parked, owner, retry = pipe.execute()
        failure = last_error(_text(error))
        owner_text = _text(owner)
        history = History(
            attempts=state.attempts,
            strikes=int(strikes or 0),
            first_failure=_ms(first),
            last_failure=_ms(parked) if parked is not None else None,
            last_error=failure,
            parked_at=_ms(parked),
            last_synced=_ms(synced),
            pending_since=state.pending_since if state.state == "pending" else None,
            retry_at=_ms(retry),
            lease_owner_task=task_of(owner_text) if owner_text else None,
        )
        return Found(queue, state, history)
    return None
