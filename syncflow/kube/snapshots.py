"""Objects as their watch event carried them, delivered with a key's claim (docs/architecture.md §8).

A first sync (the source object does not carry the rule's finalizer yet) starts from the event's
object instead of reading it again: the finalizer write that follows is conditional on that object's
resourceVersion, so a stale snapshot ends in a 409 and a retry that reads, never in a write made from
old data. A status run starts from the copy its event carried instead of reading it: the copy is the
side whose status wins, and any newer version of it is a newer event that runs the key again.
Watches that opt in hand their event's object to the queue's ``add`` (``event_object``); the queue
keeps the newest one per ``sync`` or ``status`` key (any later event without one clears it), at most
``MAX_SNAPSHOT_BYTES`` each and ``MAX_SNAPSHOTS`` per queue, and ``claim`` hands it to the task
(``delivered``) and forgets it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import orjson

MAX_SNAPSHOT_BYTES = 16 * 1024
"""A larger object is not kept: its sync reads it."""
MAX_SNAPSHOTS = 10_000
"""Snapshots kept per queue; past it new keys get none (their sync reads the object)."""


@dataclass(frozen=True)
class Snapshot:
    """An object as the watch of endpoint ``side`` saw it (without ``managedFields``)."""

    side: str
    obj: dict[str, Any]
    uncopied: bool = False
    """The object came from a listing of both sides of its rule that held no copy of it (a poll)."""


_event: ContextVar[Snapshot | None] = ContextVar("syncflow_event_object", default=None)
_delivered: ContextVar[Snapshot | None] = ContextVar("syncflow_delivered_snapshot", default=None)


@contextmanager
def event_object(side: str, obj: dict[str, Any] | None, *, uncopied: bool = False) -> Iterator[None]:
    """Keys added inside the block may keep ``obj`` (seen on ``side``; ``uncopied``: listed beside its
    rule's copies, none of them its own) as their snapshot; ``None`` (e.g. a deletion) clears what they
    kept."""
    token = _event.set(Snapshot(side, obj, uncopied) if side and obj is not None else None)
    try:
        yield
    finally:
        _event.reset(token)


def encoded_event() -> str:
    """The current event's snapshot as the queue stores it ("" for none, or when too large)."""
    snapshot = _event.get()
    return "" if snapshot is None else encoded(snapshot)


def encoded(snapshot: Snapshot) -> str:
    """``snapshot`` as the queue stores it ("" when too large)."""
    return encoded_listed(snapshot.side, listed(snapshot.obj), uncopied=snapshot.uncopied)


def listed(obj: dict[str, Any]) -> bytes:
    """``obj`` as a snapshot keeps it (JSON, without ``managedFields``): a poll holds the objects it
    hands on so, at a fraction of their size as Python objects."""
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return orjson.dumps({**obj, "metadata": metadata})


def encoded_listed(side: str, obj: bytes, *, uncopied: bool = False) -> str:
    """The snapshot of an object ``listed`` on ``side``, as the queue stores it ("" when too large)."""
    encoded = (
        b'{"side":' + orjson.dumps(side) + b',"object":' + obj + (b',"uncopied":true}' if uncopied else b"}")
    )
    return encoded.decode() if len(encoded) <= MAX_SNAPSHOT_BYTES else ""


@contextmanager
def delivered(encoded: str) -> Iterator[None]:
    """Inside the block, ``current`` is the snapshot the claim delivered ("" for none; one that cannot
    be read counts as none: the sync reads the object)."""
    snapshot = None
    try:
        stored = orjson.loads(encoded) if encoded else None
        if stored is not None:
            snapshot = Snapshot(str(stored["side"]), dict(stored["object"]), stored.get("uncopied") is True)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        snapshot = None
    token = _delivered.set(snapshot)
    try:
        yield
    finally:
        _delivered.reset(token)


def current() -> Snapshot | None:
    """The snapshot delivered with the key being processed, if any."""
    return _delivered.get()
