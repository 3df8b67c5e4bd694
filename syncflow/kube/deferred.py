"""Work that a watch's handlers defer to the end of one read of its stream.

A watch hands each event of a read (one or more events that came in together) to its handler inside
``one_read``. A handler may ``defer`` the work that events share, e.g. the queue's adds: one Redis call
for a read's events, not one per event. The watch runs the deferred work once the read's events are
handled and before it remembers their resourceVersions, so a failure repeats the read rather than
lose its events. A read is at most one socket read's worth of events, so what is deferred is bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

Flush = Callable[[list[Any]], object]
"""Does the deferred work of the items given, in the order they were deferred."""


class Read:
    """The work deferred during one read, by the function that does it."""

    def __init__(self) -> None:
        self._deferred: dict[Flush, list[Any]] = {}

    def defer(self, flush: Flush, item: Any) -> None:
        """Hand ``item`` to ``flush`` when the read's work is done."""
        self._deferred.setdefault(flush, []).append(item)

    def flush(self) -> None:
        """Do the work deferred so far (each function once, with its items); a failure propagates, and
        the work not done yet is dropped with the read."""
        deferred, self._deferred = self._deferred, {}
        for flush, items in deferred.items():
            flush(items)


_read: ContextVar[Read | None] = ContextVar("syncflow_watch_read", default=None)


@contextmanager
def one_read() -> Iterator[Read]:
    """Inside the block, ``defer`` hands work to the read it yields; the caller flushes it."""
    read = Read()
    token = _read.set(read)
    try:
        yield read
    finally:
        _read.reset(token)


def defer(flush: Flush, item: Any) -> bool:
    """Defer ``item`` to the end of the current read, if a watch is inside one; False: do it now."""
    read = _read.get()
    if read is None:
        return False
    read.defer(flush, item)
    return True
