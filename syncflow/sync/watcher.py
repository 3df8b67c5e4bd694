"""A mode's watcher for one leadership term: its control watches, then the sync manager in a loop.

A mode subclasses ``TermWatcher``: ``prepare`` waits for what the term needs (e.g. an endpoint to
resolve), ``control_watches`` names the watches of the mode's API objects, ``before_pass`` refreshes
anything the manager reads. Control watches call ``wake`` so a change is acted on at once; otherwise
the manager runs every ``interval`` seconds.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from syncflow.kube.watch import ResourceWatch
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.watches import WatchSet
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.watch")


class TermWatcher:
    """Control watches plus the sync manager; ``run`` until the term ends."""

    def __init__(self, manager: SyncManager, *, interval: float = 2.0) -> None:
        self.manager = manager
        self.interval = interval
        self.control = WatchSet()
        self.wake = threading.Event()
        self.prepared = False

    def prepare(self, stop: threading.Event) -> bool:
        """Wait for what the term needs; False if stopped first."""
        return True

    def control_watches(self) -> dict[str, ResourceWatch]:
        """The watches of the mode's own API objects, by name."""
        return {}

    def before_pass(self) -> None:
        """Refresh what the manager's pass reads."""

    def run(self, stop: threading.Event) -> None:
        """Prepare, start the control watches, then run the manager until stopped."""
        try:
            if not self.prepare(stop):
                return
            self.prepared = True
            threading.Thread(target=self._wake_at, args=(stop,), name="watcher-stop", daemon=True).start()
            for name, watch in self.control_watches().items():
                self.control.start(name, watch)
            while not stop.is_set():
                redis = self.manager.redis
                try:
                    self.before_pass()
                    self.manager.reconcile()
                except Exception as exc:  # one failed pass must not end the manager
                    if redis is None or not redis.failed(exc):  # a lost Redis is said once
                        log_event(
                            logger,
                            "watch.manager_failed",
                            level=logging.WARNING,
                            error=f"{type(exc).__name__}: {exc}",
                        )
                else:
                    if redis is not None:
                        redis.answered()
                self.wake.wait(self.interval)
                self.wake.clear()
        finally:  # every watch is told to stop before any is waited for
            self.control.signal_all()
            self.manager.stop_all()
            self.control.stop_all()

    def _wake_at(self, stop: threading.Event) -> None:
        """A stop ends the wait between passes at once."""
        stop.wait()
        self.wake.set()

    def ready(self) -> tuple[bool, dict[str, Any]]:
        """Ready once prepared and every watch has listed and is connected."""
        control = self.control.statuses()
        sync_ready, details = self.manager.ready()
        ok = self.prepared and sync_ready and all(s["synced"] and s["healthy"] for s in control.values())
        return ok, {"watches": {**control, **details["watches"]}}
