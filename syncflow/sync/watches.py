"""Named list+watch loops on threads, and the handler that turns what they see into keys."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from syncflow.kube.refs import ObjectRef
from syncflow.kube.watch import ResourceWatch
from syncflow.queue.keys import ObjectKey
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.watch")

Enqueue = Callable[[Iterable[ObjectKey], bool], None]
"""Adds keys to the work queue; the flag says bulk (relists) rather than events."""

KeysFor = Callable[[str, dict[str, Any] | None, ObjectRef], list[ObjectKey]]
"""Maps (event type or ``RESYNC``, object or None on resync, ref) to the keys to enqueue."""

RESYNC = "RESYNC"
STOP_WAIT = 30.0
"""Seconds a stop waits for its watches' threads, all together. A watch still blocked then (in a
request to a server that does not answer) is left to end with the process: its thread is a daemon,
and it writes nothing after its stop (a watch stores its bookmark as each stream ends, and a list
cut short by a stop reports and stores nothing)."""


class KeyHandler:
    """A watch handler that turns events and resyncs into keys."""

    def __init__(self, enqueue: Enqueue, keys_for: KeysFor):
        self.enqueue = enqueue
        self.keys_for = keys_for

    def on_event(self, type: str, obj: dict[str, Any], ref: ObjectRef) -> None:
        """An event enqueues its keys at event priority."""
        self.enqueue(self.keys_for(type, obj, ref), False)

    def on_resync(self, refs: set[ObjectRef]) -> None:
        """A (re)list enqueues every key in bulk."""
        self.enqueue([key for ref in sorted(refs) for key in self.keys_for(RESYNC, None, ref)], True)


class WatchSet:
    """Named watches, each on its own thread with its own stop event."""

    def __init__(self) -> None:
        self.watches: dict[str, tuple[ResourceWatch, threading.Event, threading.Thread]] = {}

    def start(self, name: str, watch: ResourceWatch) -> None:
        """Run ``watch`` until stopped (no-op if a watch of that name runs)."""
        if name in self.watches:
            return
        stop = threading.Event()
        thread = threading.Thread(target=watch.run, args=(stop,), name=f"watch:{name}", daemon=True)
        self.watches[name] = (watch, stop, thread)
        thread.start()
        log_event(logger, "watch.started", watch=name)

    def stop(self, *names: str) -> None:
        """Stop these watches together (names not running are skipped): each is told to stop before
        any is waited for, and they are waited for ``STOP_WAIT`` seconds in all."""
        running = [(name, self.watches.pop(name)) for name in dict.fromkeys(names) if name in self.watches]
        for _, (_, stop, _) in running:
            stop.set()
        until = time.monotonic() + STOP_WAIT
        for name, (_, _, thread) in running:
            thread.join(timeout=max(0.0, until - time.monotonic()))
            if thread.is_alive():
                log_event(
                    logger, "watch.stop_abandoned", level=logging.WARNING, watch=name, waited_s=STOP_WAIT
                )
            else:
                log_event(logger, "watch.stopped", watch=name)

    def signal_all(self) -> None:
        """Tell every watch to stop, without waiting for any (``stop_all`` waits)."""
        for _, stop, _ in self.watches.values():
            stop.set()

    def stop_all(self) -> None:
        """Stop every watch (together, as ``stop``)."""
        self.stop(*self.watches)

    def statuses(self) -> dict[str, dict[str, Any]]:
        """Readiness of every watch, by name."""
        return {
            name: {"synced": w.status.synced, "healthy": w.status.healthy, "error": w.status.last_error}
            for name, (w, _, _) in self.watches.items()
        }
