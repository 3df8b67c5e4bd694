"""Publishing for a process that publishes key by key, as a watch does event by event.

A key published after a quiet spell goes out at once. Keys that follow within ``LINGER`` of a send
wait, at most ``LINGER``, and go out together: the publisher then packs them into few messages
(``syncflow.tasks.CeleryPublisher``), so a burst of events costs a few broker messages, not one
each. At most ``MAX_HELD`` messages wait; a full buffer is sent at once by the caller.

Status keys linger longer while the status queue has a backlog (``STATUS_LINGER``, ``QueueLingers``,
``BacklogLinger``): during a burst, status events arrive one by one at the pace the copies land, and
the workers take messages from each Celery queue in turn, whatever their size. At sync's 20 ms, a
status message carried 2 to 3 keys against a sync message's 6 to 8, so status got about an eighth
of the pool's time during a burst and, in a large one, fell minutes behind it. While messages wait
in the broker anyway, a longer wait costs a key little; without a backlog, status keys linger as
sync's do, so a status change that the workers could take at once is not held back.

A send that fails on the background thread is logged and dropped: its keys are already pending in
the queue, and the pump republishes a key whose message a broker scan proves missing
(docs/architecture.md §7).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import Publisher
from syncflow.util.logs import log_event
from syncflow.util.neterrors import describe

logger = logging.getLogger("syncflow.publish")

LINGER = 0.02
"""Seconds a key may wait for others to share its message (only within a burst)."""
STATUS_LINGER = 0.1
"""Seconds a status key may wait for others while the status queue has a backlog: enough for its
message to carry as many keys as a sync message while copies land at 100 a second."""
BACKLOG_EVERY = 0.25
"""Seconds between two reads of a queue's backlog in the broker (one round trip each)."""
BACKLOG_RETRY = 10.0
"""Seconds before a backlog that could not be read is read again (meanwhile: no backlog)."""
MAX_HELD = 10_000
"""Messages held at most; a full buffer is sent at once."""


class LingeringPublisher:
    """A ``Publisher`` that lets the keys of a burst share messages (see the module docstring)."""

    def __init__(
        self, publisher: Publisher, linger: float | Callable[[], float] = LINGER, limit: int = MAX_HELD
    ) -> None:
        """``linger``: seconds, or what tells them at each call."""
        self.publisher = publisher
        self.linger = linger if callable(linger) else lambda: linger
        self.limit = limit
        self._held: list[tuple[ObjectKey, str]] = []
        self._due = 0.0
        self._last_send = -math.inf
        self._closed = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def __call__(self, messages: Sequence[tuple[ObjectKey, str]], /, *, together: bool = False) -> None:
        if together:  # the rest of one message: already one burst, nothing to wait for
            self.publisher(messages, together=True)
            return
        linger = 0.0 if self._closed else self.linger()
        with self._changed:
            now = time.monotonic()
            if self._closed or (not self._held and now - self._last_send >= linger):
                self._last_send = now
                send_now = list(messages)
            else:
                if not self._held:
                    self._due = self._last_send + linger
                self._held.extend(messages)
                send_now = self._take(now) if len(self._held) >= self.limit else []
                self._start()
                self._changed.notify()
        if send_now:
            self.publisher(send_now)  # on the caller's thread: its errors are the caller's

    def close(self) -> None:
        """Send what is held and stop the background thread."""
        with self._changed:
            self._closed = True
            self._changed.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=30)

    def _take(self, now: float) -> list[tuple[ObjectKey, str]]:
        taken, self._held = self._held, []
        self._last_send = now
        return taken

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="lingering-publisher", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            try:
                self.publisher(batch)
            except Exception as exc:
                log_event(
                    logger,
                    "publish.failed",
                    level=logging.WARNING,
                    key=str(batch[0][0]),
                    keys=len(batch),
                    error=f"{type(exc).__name__}: {describe(exc)}",
                )

    def _next_batch(self) -> list[tuple[ObjectKey, str]] | None:
        """Wait until held messages are due (or closing); None once closed with nothing held."""
        with self._changed:
            while True:
                now = time.monotonic()
                if self._held and (self._closed or now >= self._due):
                    return self._take(now)
                if self._closed:
                    return None
                self._changed.wait(self._due - now if self._held else None)


class BacklogLinger:
    """A linger of ``long`` seconds while ``backlog()`` (messages waiting in the broker) is above zero,
    else ``LINGER``. One thread at a time reads the backlog, at most every ``BACKLOG_EVERY`` seconds;
    the others use the last answer. A read that fails is logged and counts as no backlog until
    ``BACKLOG_RETRY`` seconds later: it only tunes a wait, so it never fails a publish."""

    def __init__(self, backlog: Callable[[], int], long: float) -> None:
        self.backlog = backlog
        self.long = long
        self._backlogged = False
        self._next_read = -math.inf
        self._reading = threading.Lock()

    def __call__(self) -> float:
        now = time.monotonic()
        if now >= self._next_read and self._reading.acquire(blocking=False):
            try:
                self._next_read = now + BACKLOG_EVERY
                self._backlogged = self.backlog() > 0
            except Exception as exc:  # e.g. the broker is unreachable: its publish will say so
                self._backlogged = False
                self._next_read = now + BACKLOG_RETRY
                log_event(
                    logger,
                    "publish.backlog_unread",
                    level=logging.WARNING,
                    error=f"{type(exc).__name__}: {describe(exc)}",
                    retry_in=BACKLOG_RETRY,
                )
            finally:
                self._reading.release()
        return self.long if self._backlogged else LINGER


class QueueLingers:
    """A ``Publisher`` that lets each Celery queue's keys linger as ``lingers`` says (seconds, or what
    tells them; ``LINGER`` for the other queues), each queue through its own ``LingeringPublisher``."""

    def __init__(self, publisher: Publisher, lingers: Mapping[str, float | Callable[[], float]]) -> None:
        self._by_queue = {queue: LingeringPublisher(publisher, linger) for queue, linger in lingers.items()}
        self._other = LingeringPublisher(publisher)

    def __call__(self, messages: Sequence[tuple[ObjectKey, str]], /, *, together: bool = False) -> None:
        routed: dict[str, list[tuple[ObjectKey, str]]] = defaultdict(list)
        for key, queue in messages:
            routed[queue].append((key, queue))
        for queue, held in routed.items():
            self._by_queue.get(queue, self._other)(held, together=together)

    def close(self) -> None:
        """Send what every queue holds and stop their background threads."""
        for publisher in (*self._by_queue.values(), self._other):
            publisher.close()
