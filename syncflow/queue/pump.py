"""The pump (docs/architecture.md §7), run by beat every second: promote due retries, requeue expired
leases, and republish the pending keys whose message a broker scan proved lost.

One run at a time per agent (a Redis lock held for the whole run), and each run is bounded: after
``pump_budget`` seconds it starts no new pass (each queue gets at least one) and no new scan chunk
(the scan gets at least one); what is left waits for the next run.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from redis import Redis
from redis.exceptions import LockError

from syncflow.config import Settings
from syncflow.queue.broker import MessageScan
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import pump_last_key, pump_lock_key
from syncflow.queue.registry import queue_of
from syncflow.queue.workqueue import Lane, WorkQueue

LAST_RUN_TTL = 86400
"""Seconds the time of the last run is kept (``syncflow queue`` shows it)."""

Publish = Callable[[str, Iterable[tuple[ObjectKey, Lane]]], int]
"""Sends one message per (key, lane) of a work queue; returns how many."""


@dataclass(frozen=True)
class PumpTotals:
    """What one pump run did across all queues."""

    promoted: int = 0
    expired: int = 0
    republished: int = 0
    published: int = 0
    scanned: int = 0
    """Broker messages the scan looked at."""
    unfinished: bool = False
    """The run reached its budget with work left (the next run continues it)."""


class Pump:
    """One agent's pump over its work queues and its broker."""

    def __init__(
        self,
        redis: Redis,
        settings: Settings,
        queues: Mapping[str, WorkQueue],
        publish: Publish,
        scan: MessageScan,
    ) -> None:
        self.redis = redis
        self.settings = settings
        self.queues = queues
        self.publish = publish
        self.scan = scan

    def run(self, grace: float | None = None) -> PumpTotals | None:
        """One bounded run; None if another run holds the lock. ``grace`` overrides ``pump_grace``."""
        budget = self.settings.pump_budget
        lock = self.redis.lock(
            pump_lock_key(self.settings.agent_name), timeout=max(10.0, 20 * budget), blocking=False
        )
        if not lock.acquire():
            return None
        try:
            run = _Run(self, self.settings.pump_grace if grace is None else grace, budget)
            totals = run.run()
            self.redis.set(pump_last_key(self.settings.agent_name), run.now, ex=LAST_RUN_TTL)
            return totals
        finally:
            with contextlib.suppress(LockError):  # expired during a stalled run: nothing to release
                lock.release()


class _Run:
    def __init__(self, pump: Pump, grace: float, budget: float) -> None:
        self.pump = pump
        self.grace = grace
        self.deadline = time.monotonic() + budget
        self.promoted = self.expired = self.republished = self.published = 0
        self.unfinished = False
        self.now = 0
        """Redis time (ms) of the run's first pass."""

    def run(self) -> PumpTotals:
        self.now, overdue = self._passes(self.pump.scan.verified())
        now = self.now
        # The scan always takes at least one chunk, so it progresses even when the passes spent the budget.
        begin_before = now - round(self.grace * 1000) if overdue else None
        step = self.pump.scan.step(self.deadline, begin_before, self._touch)
        if step.completed:
            self._passes(step.started)  # republish what this scan proved lost
        elif step.started:
            self.unfinished = True
        return PumpTotals(
            self.promoted, self.expired, self.republished, self.published, step.scanned, self.unfinished
        )

    def _spent(self) -> bool:
        return time.monotonic() >= self.deadline

    def _passes(self, verified: int) -> tuple[int, int]:
        """Pump every queue until a pass moves less than a batch or the budget is spent; returns the
        Redis time of the first pass and the overdue keys the last passes left."""
        now, overdue = 0, 0
        batch = self.pump.settings.pump_batch
        for queue in self.pump.queues.values():
            while True:
                result = queue.pump(self.grace, verified)
                now = now or result.now
                self.promoted += result.promoted
                self.expired += result.expired
                self.republished += result.republished
                self.published += self.pump.publish(queue.name, result.publish)
                full = max(result.promoted, result.expired, result.republished) >= batch
                if not full:
                    overdue += result.overdue
                    break
                if self._spent():
                    self.unfinished = True
                    break
        return now, overdue

    def _touch(self, keys: list[ObjectKey], started: int) -> None:
        """Move the pending score of every key the scan saw up to the scan's start."""
        by_queue: dict[str, list[ObjectKey]] = defaultdict(list)
        for key in keys:
            with contextlib.suppress(LookupError):  # a verb this process does not know
                by_queue[queue_of(key.verb)].append(key)
        batch = self.pump.settings.pump_batch
        for name, found in by_queue.items():
            for i in range(0, len(found), batch):
                self.pump.queues[name].touch(found[i : i + batch], started)
