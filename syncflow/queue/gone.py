"""Whether a run found its key's object gone: the handler says so (``mark``), and ``done`` then drops
the key from the queue's synced record (K, docs/architecture.md §5.1) instead of recording it. The
handler may name other keys of the same object (its ``status`` and ``related`` keys), whose records
go too, with one more round trip after the run: only runs that end an object pay it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Found:
    """What one run marked: its own key gone, and the other keys whose synced record goes with it."""

    gone: bool = False
    also: list[str] = field(default_factory=list)


_found: ContextVar[Found | None] = ContextVar("syncflow_key_gone", default=None)


def mark(*also: str) -> None:
    """The running key's object (or rule) is gone: the key names nothing any more, nor do the keys
    ``also`` names. Outside a run: no-op."""
    found = _found.get()
    if found is not None:
        found.gone = True
        found.also.extend(key for key in also if key not in found.also)


@contextlib.contextmanager
def tracking() -> Iterator[Found]:
    """Collect the ``mark`` calls of one run."""
    found = Found()
    token = _found.set(found)
    try:
        yield found
    finally:
        _found.reset(token)
