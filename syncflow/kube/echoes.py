"""Our own writes and their watch echoes (docs/architecture.md §8): an event at the resourceVersion of a write
syncflow made is not new work.

A task collects the writes it makes (``collect`` around the handler, ``record`` at each write); the
queue's ``done`` stores them with the task's outcome, in the same script call. A watch tags each
event with its origin (``event_origin`` around the handler); the queue's ``add`` drops an event whose
origin is a stored own write, and keeps an event that arrives while its key is leased aside, so
``done`` can tell whether it was the echo of that very task's write. Stored writes expire after
``ECHO_TTL_SECONDS`` and are capped in number: a missed echo only costs one idempotent reconcile.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from syncflow.kube.refs import ObjectRef

ECHO_TTL_SECONDS = 300
MAX_STORED_WRITES = 100_000
"""Own writes kept per agent (the oldest go first): about 100 bytes each."""
MAX_WRITES_PER_TASK = 64
"""Writes of one task that are stored (a task writes a handful of objects; more are not echoes worth
recognising)."""


@dataclass(frozen=True)
class Origin:
    """One object at one resourceVersion on one side (an endpoint name)."""

    side: str
    ref: ObjectRef
    resource_version: str

    @property
    def token(self) -> str:
        """The object, as the queue's scripts name it."""
        return f"{self.side}:{self.ref.encode()}"


_writes: ContextVar[list[Origin] | None] = ContextVar("syncflow_own_writes", default=None)
_event: ContextVar[Origin | None] = ContextVar("syncflow_event_origin", default=None)


@contextmanager
def collect() -> Iterator[list[Origin]]:
    """Collect the writes ``record``ed inside the block (a task's writes)."""
    writes: list[Origin] = []
    token = _writes.set(writes)
    try:
        yield writes
    finally:
        _writes.reset(token)


def record(side: str, ref: ObjectRef, resource_version: str) -> None:
    """Note that ``ref`` on ``side`` is at ``resource_version`` because we wrote it (outside ``collect``:
    nothing to note into; its echo then costs a reconcile)."""
    writes = _writes.get()
    if writes is not None and resource_version and len(writes) < MAX_WRITES_PER_TASK:
        writes.append(Origin(side, ref, resource_version))


@contextmanager
def event_origin(side: str, ref: ObjectRef, resource_version: str) -> Iterator[None]:
    """Keys added inside the block come from an event of ``ref`` at ``resource_version`` on ``side``
    (empty side or version: an origin that cannot be an echo)."""
    token = _event.set(Origin(side, ref, resource_version) if side and resource_version else None)
    try:
        yield
    finally:
        _event.reset(token)


def current_event() -> Origin | None:
    """The origin of the event being handled, if any."""
    return _event.get()
