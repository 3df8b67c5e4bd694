"""A worker trims its C heap after tasks, at most once per interval in each process."""

from __future__ import annotations

import sys

import pytest
from celery import signals

from syncflow.runtime import heap


class Trim:
    """Records the ``pad`` of each call, as glibc's ``malloc_trim`` takes it."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, pad: int) -> int:
        self.calls.append(pad)
        return 1


def test_trims_after_the_first_task_then_once_per_interval() -> None:
    trim = Trim()
    trimmed = heap.TrimAfterTask(trim, interval=3600)
    for _ in range(5):
        trimmed(task=None, retval=None, state="SUCCESS")
    assert trim.calls == [0]


def test_with_no_interval_every_task_trims() -> None:
    trim = Trim()
    trimmed = heap.TrimAfterTask(trim, interval=0)
    for _ in range(3):
        trimmed()
    assert trim.calls == [0, 0, 0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_a_worker_on_glibc_connects_the_real_trim_to_task_postrun() -> None:
    before = len(signals.task_postrun.receivers)
    try:
        assert heap.connect()
        receiver = signals.task_postrun.receivers[-1][1]
        assert isinstance(receiver, heap.TrimAfterTask) and len(signals.task_postrun.receivers) == before + 1
        assert receiver.trim(0) in (0, 1), "glibc's malloc_trim answers whether it released memory"
    finally:
        del signals.task_postrun.receivers[before:]
        signals.task_postrun.sender_receivers_cache.clear()
