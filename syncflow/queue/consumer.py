"""The worker's Celery consumer: task events sent in batches, and a lost broker said in one line.

Celery buffers task events and, by default, sends whatever is buffered on the event loop's next
turn: in practice one broker publish per event, three per task (received, started, succeeded). Here
a buffered event waits at most ``EVENT_FLUSH_DELAY`` for others, so a busy worker sends each
batch as one message (Celery's ``task.multi``, which Flower and every event receiver unpack). The
buffer is bounded by Celery's limit (24 events: a full buffer is sent at once), and what is buffered
is sent before the consumer shuts down.

While the broker is gone Celery logs an error per reconnection attempt (and a warning when the
connection drops); this consumer logs ``redis.unreachable`` once instead and ``redis.reachable``
when it has connected again (``syncflow.queue.reachability``).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from celery.worker.consumer import Consumer
from celery.worker.consumer.consumer import CONNECTION_RETRY
from celery.worker.state import maybe_shutdown

from syncflow.queue.reachability import Reachability

EVENT_FLUSH_DELAY = 0.05
"""Seconds a task event may wait for others before it is sent (Flower shows it this much later)."""


class _WithoutConnectionRetry(logging.Filter):
    """Drops Celery's "Connection to broker lost" warning (the consumer logs its own line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.args, tuple) and record.args[:1] == (CONNECTION_RETRY,))


logging.getLogger("celery.worker.consumer.consumer").addFilter(_WithoutConnectionRetry())


class BatchedEventsConsumer(Consumer):  # type: ignore[misc]
    """Celery's consumer, sending buffered task events at most every ``EVENT_FLUSH_DELAY`` and
    saying once that the broker is unreachable, however long it stays so."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._flush_due = False
        self.reachability = Reachability(self.app.conf.broker_url)

    def ensure_connected(self, conn: Any) -> Any:
        """Connect, retrying for ever (syncflow's broker settings): one line when an attempt fails,
        none for the retries after it, one when connected."""
        connected = conn.ensure_connection(
            lambda exc, _interval: self.reachability.lost(exc),
            self.app.conf.broker_connection_max_retries,
            callback=maybe_shutdown,
        )
        self.first_connection_attempt = False
        self.broker_connection_retry_attempt = 0
        self.reachability.answered()
        return connected

    def on_connection_error_after_connected(self, exc: Exception) -> None:
        """The connection dropped: say so once, then clean up as Celery does."""
        self.reachability.lost(exc)
        super().on_connection_error_after_connected(exc)

    def on_connection_error_before_connected(self, exc: Exception) -> None:
        """A start-up step failed before the connection was up: say so once (Celery retries)."""
        self.reachability.lost(exc)

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
