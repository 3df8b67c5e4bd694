"""Checking when a request budget makes a request due, however late the test process runs.

A reservation answers with a wait from the moment Redis ran it, somewhere inside the call. A busy
machine may delay the test between calls, which shortens later waits (the tokens were refilling
meanwhile) but never moves a due time. So assert due times, bracketed by the calls' start and end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

SLACK = 0.01
"""Seconds of rounding the bucket's arithmetic may add to a due time."""


@dataclass(frozen=True)
class Timed:
    """A reservation's answer (seconds to wait) and when its call began and ended."""

    wait: float
    began: float
    ended: float


def timed(reserve: Callable[[], float]) -> Timed:
    """Run ``reserve`` and note when."""
    began = time.time()
    wait = reserve()
    return Timed(wait, began, time.time())


def is_due_at(answer: Timed, first: Timed, offset: float) -> bool:
    """Whether ``answer`` makes its request due ``offset`` seconds after the ``first`` call ran (or,
    if that moment had passed by the time it was made, at once)."""
    earliest, latest = first.began + offset - SLACK, first.ended + offset + SLACK
    if answer.wait == 0:
        return answer.ended >= earliest
    return answer.ended + answer.wait >= earliest and answer.began + answer.wait <= latest
