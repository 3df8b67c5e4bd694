"""The ``syncflow watch`` process of any mode: leader election, the mode's watcher per term, health.

While this replica leads (or always, without leader election), the mode's watcher runs: it watches
the mode's API objects and both sides of every ready rule and enqueues keys; it never writes objects.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from kubernetes.client import ApiClient

from syncflow.config import Settings
from syncflow.kube import deferred
from syncflow.kube.leader import LeaderElector
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import STATUS_QUEUE
from syncflow.queue.linger import STATUS_LINGER, BacklogLinger, QueueLingers
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import EventAdd
from syncflow.util.health import HealthServer
from syncflow.util.logs import configure_logging, log_event

logger = logging.getLogger("syncflow.watch")


class Watcher(Protocol):
    """A mode's watcher for one leadership term."""

    def run(self, stop: threading.Event) -> None:
        """Watch and enqueue until ``stop`` is set."""

    def ready(self) -> tuple[bool, dict[str, Any]]:
        """Whether it is syncing (every watch listed and connected), with details."""


WatcherFactory = Callable[[Callable[[Iterable[ObjectKey], bool], None]], Watcher]
"""Builds a term's watcher around the enqueue function."""


class WatchProcess:
    """Runs the mode's watcher while this replica leads the agent's Lease."""

    def __init__(
        self,
        settings: Settings,
        lease_client: ApiClient,
        make_watcher: WatcherFactory,
        service: QueueService,
    ) -> None:
        """``service``: the process's queue service, bound to ``settings`` (the app's, given by the
        mode, so the engine never imports the app)."""
        self.settings = settings
        configure_logging(settings.log_format, settings.log_level, agent=settings.qualified_agent_name)
        # Events come one by one: the keys of a burst share messages (syncflow.queue.linger).
        # Status keys linger longer while their queue has a backlog, so status returns keep up.
        status_backlog = BacklogLinger(
            lambda: service.broker.depths([STATUS_QUEUE])[STATUS_QUEUE], STATUS_LINGER
        )
        self.publisher = QueueLingers(service.publisher, {STATUS_QUEUE: status_backlog})
        self.queue = QueueService(service.redis, settings, self.publisher, service.broker)
        self.make_watcher = make_watcher
        self.identity = f"{settings.qualified_agent_name}_{socket.gethostname()}_{os.getpid()}"
        self.elector = LeaderElector(
            lease_client,
            settings.namespace,
            f"syncagent.{settings.agent_name}",
            self.identity,
            lease_duration=settings.lease_duration,
            renew_deadline=settings.renew_deadline,
            retry_period=settings.retry_period,
        )
        self.stop = threading.Event()
        self._term: tuple[Watcher, threading.Event, threading.Thread] | None = None

    def _enqueue(self, keys: Iterable[ObjectKey], bulk: bool) -> None:
        """Add keys: a relist's at once, an event's at the end of its watch's read, with the others of
        that read (``syncflow.kube.deferred``: one script call for them all)."""
        batch = list(keys)
        if not batch:
            return
        if bulk:
            self.queue.add_many(batch, bulk=True)
            return
        event = EventAdd.current(batch)
        if not deferred.defer(self.queue.add_events, event):
            self.queue.add_events([event])

    def _start_term(self) -> None:
        watcher = self.make_watcher(self._enqueue)
        term_stop = threading.Event()
        thread = threading.Thread(target=watcher.run, args=(term_stop,), name="watcher", daemon=True)
        self._term = (watcher, term_stop, thread)
        thread.start()

    def _stop_term(self) -> None:
        if self._term is not None:
            _, term_stop, thread = self._term
            term_stop.set()
            thread.join(timeout=60)
            self._term = None

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """Ready while the Lease answers and, leading, every watch is listed and connected; as a standby,
        while it sees a leader."""
        lease_ok = self.elector.healthy or not self.settings.enable_leader_election
        lease = {"lease_healthy": lease_ok, "lease_error": self.elector.last_error}
        if self._term is not None:
            ready, details = self._term[0].ready()
            return ready and lease_ok, {"role": "leader", "identity": self.identity, **lease, **details}
        holder = self.elector.observed_holder
        ready = bool(holder) and lease_ok
        return ready, {"role": "standby", "identity": self.identity, "leader": holder or "", **lease}

    def run(self) -> None:
        """Serve until SIGINT/SIGTERM."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop.set())
        health = (
            HealthServer(self.settings.health_address, self.readiness)
            if self.settings.health_address
            else None
        )
        if health is not None:
            health.start()
        from syncflow.metrics import exposition

        metrics = exposition.serve(self.settings, "watch")
        log_event(
            logger,
            "watch.starting",
            agent=self.settings.qualified_agent_name,
            identity=self.identity,
            leader_election=self.settings.enable_leader_election,
        )
        try:
            if self.settings.enable_leader_election:
                self.elector.run(self._start_term, self._stop_term, self.stop)
            else:
                self._start_term()
                self.stop.wait()
        finally:
            self._stop_term()
            self.publisher.close()
            if health is not None:
                health.stop()
            if metrics is not None:
                metrics.stop()
            log_event(logger, "watch.stopped", identity=self.identity)
