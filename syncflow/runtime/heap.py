"""Keeps a long-running process's memory work small.

- **Trim**: hands the heap memory a worker's tasks freed back to the operating system (glibc's
  ``malloc_trim``), at most once per ``TRIM_INTERVAL`` in each pool process. Python keeps objects of
  more than 512 bytes (a poll's encoded objects, response bodies) on the C heap; freed, they stay
  resident until the heap is trimmed, so a worker's RSS would stay at the high water mark of its
  largest task.
- **Freeze**: moves the objects a process made while starting (modules, classes, clients: about
  100,000) out of the garbage collector's sight (``gc.freeze``). Every full collection scanned them
  all, and a task that decodes a list of objects keeps enough of them alive to cause several: in a
  worker, the collector took about three quarters of the time of decoding a 500-object page. Frozen
  before the pool forks, they also stay in pages the pool processes share with the parent (a
  collection writes to every object it scans).
"""

from __future__ import annotations

import ctypes
import gc
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from celery import signals

TRIM_INTERVAL = 1.0
"""Seconds between two trims in one process (each walks the free chunks of the heap)."""


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (None on another C library or system)."""
    if not sys.platform.startswith("linux"):
        return None
    trim: Callable[[int], int] | None = getattr(ctypes.CDLL(None), "malloc_trim", None)
    return trim


@dataclass
class TrimAfterTask:
    """A ``task_postrun`` receiver that calls ``trim(0)`` when ``interval`` seconds have passed since
    its last call (each pool process has its own copy after the fork)."""

    trim: Callable[[int], int]
    interval: float = TRIM_INTERVAL
    last: float = field(default=-math.inf)

    def __call__(self, **_: Any) -> None:
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            self.trim(0)


def freeze_startup(**_: Any) -> None:
    """Keep every object this process holds now out of the garbage collector's scans from now on: call
    it once the process has started (imports done, clients built). They are still freed when dropped;
    only a reference cycle among them would never be collected."""
    gc.freeze()


def connect() -> bool:
    """In this worker: freeze each pool process's startup objects (``freeze_startup``) and trim after
    tasks (where glibc is the C library); returns whether it will trim."""
    signals.worker_process_init.connect(freeze_startup, weak=False)
    trim = _malloc_trim()
    if trim is None:
        return False
    signals.task_postrun.connect(TrimAfterTask(trim), weak=False)
    return True
