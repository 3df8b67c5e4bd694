"""Keeps the leases of running handlers alive: one daemon thread per process."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from syncflow.queue.keys import ObjectKey
from syncflow.queue.workqueue import WorkQueue
from syncflow.util.logs import log_event

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class Lease:
    """A lease held by a running handler; ``lost`` is set if renewal found it taken over."""

    queue: WorkQueue
    key: ObjectKey
    token: str
    lost: threading.Event = field(default_factory=threading.Event)


class LeaseRenewer:
    """Renews every held lease each ``interval`` seconds (a third of the lease TTL is right)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._held: set[Lease] = set()
        self._lock = threading.Lock()
        self._pid = 0

    @contextmanager
    def hold(self, queue: WorkQueue, key: ObjectKey, token: str) -> Iterator[Lease]:
        """Renew the lease on ``key`` while the block runs."""
        lease = Lease(queue, key, token)
        with self._lock:
            self._ensure_thread()
            self._held.add(lease)
        try:
            yield lease
        finally:
            with self._lock:
                self._held.discard(lease)

    def _ensure_thread(self) -> None:
        # A thread does not survive fork: start one per process, lazily.
        if self._pid != os.getpid():
            self._pid = os.getpid()
            threading.Thread(target=self._loop, name="lease-renewer", daemon=True).start()

    def _loop(self) -> None:
        while True:
            time.sleep(self.interval)
            with self._lock:
                leases = list(self._held)
            for lease in leases:
                self._renew(lease)

    def _renew(self, lease: Lease) -> None:
        try:
            if not lease.queue.renew(lease.key, lease.token):
                lease.lost.set()
                log_event(logger, "lease.lost", level=logging.WARNING, key=str(lease.key))
        except Exception as exc:
            log_event(
                logger, "lease.renew_failed", level=logging.WARNING, key=str(lease.key), error=repr(exc)
            )
