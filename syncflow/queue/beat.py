"""Celery beat's scheduler for syncflow: a periodic task is not sent while earlier ones still wait.

Beat sends the pump every second whether or not a worker takes it; with no worker on the periodic
queue its broker list would grow by 86,400 messages a day. Every periodic task is safe to skip (the
next tick does the same work), so beat skips a tick while ``WAITING_LIMIT`` messages already wait.

While the broker is unreachable a tick is skipped too: beat logs ``redis.unreachable`` once (not
Celery's error and stack per tick) and ``redis.reachable`` when a tick goes out again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cached_property
from typing import Any

from celery.beat import PersistentScheduler, ScheduleEntry

from syncflow.queue.broker import Broker
from syncflow.queue.layout import PERIODIC_QUEUE
from syncflow.queue.reachability import BROKER_ERRORS, Reachability
from syncflow.util.logs import log_event

logger = logging.getLogger(__name__)

WAITING_LIMIT = 10
"""Messages of a queue beat sends to that may wait before it skips ticks."""


class BoundedScheduler(PersistentScheduler):  # type: ignore[misc]
    """Beat's persistent scheduler, skipping a tick while its queue already holds enough messages."""

    skipped = 0

    @cached_property
    def broker(self) -> Broker:
        """The broker of the process's bound settings (Redis lists or RabbitMQ queues): given by
        whoever starts beat, through ``bounded_scheduler``."""
        raise NotImplementedError("a BoundedScheduler is made by bounded_scheduler(broker)")

    @cached_property
    def reachability(self) -> Reachability:
        """Whether the broker answered the last tick."""
        return Reachability(self.app.conf.broker_url, BROKER_ERRORS)

    def apply_async(
        self, entry: ScheduleEntry, producer: Any = None, advance: bool = True, **kwargs: Any
    ) -> Any:
        try:
            result = self._send_unless_waiting(entry, producer, advance, **kwargs)
        except Exception as exc:
            if not self.reachability.failed(exc):
                raise
            return None
        self.reachability.answered()
        return result

    def _send_unless_waiting(self, entry: ScheduleEntry, producer: Any, advance: bool, **kwargs: Any) -> Any:
        queue = entry.options.get("queue") or PERIODIC_QUEUE
        waiting = self.broker.depths([queue])[queue]
        if waiting >= WAITING_LIMIT:
            if advance:
                self.reserve(entry)
            if not self.skipped:
                log_event(
                    logger,
                    "beat.paused",
                    level=logging.WARNING,
                    queue=queue,
                    waiting=waiting,
                    reason="no worker takes the periodic tasks",
                )
            self.skipped += 1
            log_event(logger, "beat.skipped", level=logging.DEBUG, task=entry.task, waiting=waiting)
            return None
        if self.skipped:
            log_event(logger, "beat.resumed", queue=queue, skipped=self.skipped)
            self.skipped = 0
        return super().apply_async(entry, producer, advance, **kwargs)


def bounded_scheduler(broker: Callable[[], Broker]) -> type[BoundedScheduler]:
    """``BoundedScheduler`` whose broker is ``broker()``, called on first use (the app's, once its
    settings are bound): the caller owns the app, so the queue never imports it."""

    class Scheduler(BoundedScheduler):
        @cached_property
        def broker(self) -> Broker:
            return broker()

    return Scheduler
