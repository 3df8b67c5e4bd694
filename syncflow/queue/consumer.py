"""The worker's Celery consumer, with task events sent in batches.

Celery buffers task events and, by default, sends whatever is buffered on the event loop's next
turn: in practice one broker publish per event, three per task (received, started, succeeded). Here
a buffered event waits at most ``EVENT_FLUSH_DELAY`` for others, so a busy worker sends each
batch as one message (Celery's ``task.multi``, which Flower and every event receiver unpack). The
buffer is bounded by Celery's limit (24 events: a full buffer is sent at once), and what is buffered
is sent before the consumer shuts down.
"""

from __future__ import annotations

import contextlib
from typing import Any

from celery.worker.consumer import Consumer

EVENT_FLUSH_DELAY = 0.05
"""Seconds a task event may wait for others before it is sent (Flower shows it this much later)."""


class BatchedEventsConsumer(Consumer):  # type: ignore[misc]
    """Celery's consumer, sending buffered task events at most every ``EVENT_FLUSH_DELAY``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._flush_due = False

    def on_send_event_buffered(self) -> None:
        """An event was buffered: send the buffer soon, once, with whatever joins it meanwhile."""
        if self.hub is None or self._flush_due:
            return
        self._flush_due = True
        self.hub.call_later(EVENT_FLUSH_DELAY, self._flush_buffered)

    def _flush_buffered(self) -> None:
        self._flush_due = False
        self._flush_events()

    def shutdown(self) -> None:
        """Send the buffered events, then shut down as Celery does."""
        with contextlib.suppress(Exception):  # the broker may be the reason for the shutdown
            self._flush_events()
        super().shutdown()
