"""A worker trims its C heap after tasks, at most once per interval in each process, and each of its
pool processes keeps its startup objects out of the garbage collector's scans."""

from __future__ import annotations

import gc
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
    started = len(signals.worker_process_init.receivers)
    try:
        assert heap.connect()
        receiver = signals.task_postrun.receivers[-1][1]
        assert isinstance(receiver, heap.TrimAfterTask) and len(signals.task_postrun.receivers) == before + 1
        assert receiver.trim(0) in (0, 1), "glibc's malloc_trim answers whether it released memory"
    finally:
        del signals.task_postrun.receivers[before:]
        signals.task_postrun.sender_receivers_cache.clear()
        del signals.worker_process_init.receivers[started:]
        signals.worker_process_init.sender_receivers_cache.clear()


def test_a_pool_process_freezes_what_it_holds_once_started() -> None:
    started = len(signals.worker_process_init.receivers)
    gc.unfreeze()
    try:
        heap.connect()
        held = [["made at startup"]]  # a list: the collector tracks it
        assert any(obj is held for obj in gc.get_objects())
        signals.worker_process_init.send(sender=None)
        assert gc.get_freeze_count() > 0
        assert not any(obj is held for obj in gc.get_objects()), "no longer scanned"
        later = [["made by a task"]]
        assert any(obj is later for obj in gc.get_objects()), "what comes later still is"
    finally:
        gc.unfreeze()
        del signals.worker_process_init.receivers[started:]
        signals.worker_process_init.sender_receivers_cache.clear()
