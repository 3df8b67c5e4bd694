"""A deadline for the API requests of one unit of work: each request's timeouts are cut to the time
left, so several slow calls never carry a task past its time limit."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_deadline: ContextVar[float | None] = ContextVar("syncflow_deadline", default=None)


class DeadlineExceededError(TimeoutError):
    """The work ran out of time before this request (a timeout: retrying later helps)."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Requests made inside the block end within ``seconds`` (an enclosing, earlier deadline wins)."""
    outer = _deadline.get()
    moment = time.monotonic() + seconds
    token = _deadline.set(moment if outer is None else min(outer, moment))
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining() -> float | None:
    """Seconds left before the current deadline (None: no deadline)."""
    moment = _deadline.get()
    return None if moment is None else moment - time.monotonic()


def request_timeout(timeout: tuple[float, float]) -> tuple[float, float]:
    """``(connect, read)`` seconds cut to the time left; raises ``DeadlineExceededError`` when none is."""
    left = remaining()
    if left is None:
        return timeout
    if left <= 0:
        raise DeadlineExceededError(f"the task's time for API requests ran out {-left:.1f}s ago")
    connect, read = timeout
    return min(connect, left), min(read, left)
