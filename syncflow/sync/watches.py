"""Named list+watch loops on threads, and the handler that turns what they see into keys."""

from __future__ import annotations

import logging
import threading
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

    def stop(self, name: str) -> None:
        """Stop one watch and wait for its thread (no-op if none of that name runs)."""
        running = self.watches.pop(name, None)
        if running is None:
            return
        _, stop, thread = running
        stop.set()
        thread.join(timeout=30)
        log_event(logger, "watch.stopped", watch=name)

    def stop_all(self) -> None:
        """Stop every watch."""
        for name in list(self.watches):
            self.stop(name)

    def statuses(self) -> dict[str, dict[str, Any]]:
        """Readiness of every watch, by name."""
        return {
            name: {"synced": w.status.synced, "healthy": w.status.healthy, "error": w.status.last_error}
            for name, (w, _, _) in self.watches.items()
        }
