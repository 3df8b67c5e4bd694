"""The ``syncflow watch`` process: leader election, the publish watcher of each term, health."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from typing import Any

from syncflow import tasks
from syncflow.config import ConfigError, Settings
from syncflow.health import HealthServer
from syncflow.keys import ObjectKey
from syncflow.kube.bookmarks import RedisBookmarks
from syncflow.kube.clients import load_client
from syncflow.kube.leader import LeaderElector
from syncflow.logs import configure_logging, log_event
from syncflow.modes.publish import tasks as publish_tasks
from syncflow.modes.publish.watcher import PublishWatcher
from syncflow.queue.layout import agent_prefix
from syncflow.sync.echoes import OwnWrites

logger = logging.getLogger("syncflow.watch")

PUBLISH_TASKS = publish_tasks.__name__  # importing it registers the verbs this process enqueues


class WatchProcess:
    """Runs the publish watcher while this replica leads (or always, without leader election)."""

    def __init__(self, settings: Settings) -> None:
        if not settings.apiexportendpointslice_ref:
            raise ConfigError("apiexportendpointslice_ref: required (--apiexportendpointslice-ref)")
        self.settings = settings
        configure_logging(settings.log_format, agent=settings.qualified_agent_name)
        tasks.bind(settings)
        self.queue = tasks.runtime.service
        self.service = load_client(settings.kubeconfig)
        self.kcp = load_client(settings.kcp_kubeconfig)
        self.identity = f"{settings.qualified_agent_name}_{socket.gethostname()}_{os.getpid()}"
        self.elector = LeaderElector(
            self.service,
            settings.namespace,
            f"syncagent.{settings.agent_name}",
            self.identity,
            lease_duration=settings.lease_duration,
            renew_deadline=settings.renew_deadline,
            retry_period=settings.retry_period,
        )
        self.stop = threading.Event()
        self._term: tuple[PublishWatcher, threading.Event, threading.Thread] | None = None

    def _enqueue(self, keys: list[ObjectKey] | Any, bulk: bool) -> None:
        keys = list(keys)
        if keys:
            self.queue.add_many(keys, bulk=bulk)

    def _start_term(self) -> None:
        watcher = PublishWatcher(
            self.service,
            self.kcp,
            self.settings.apiexportendpointslice_ref or "",
            self.settings.agent_name,
            self.settings.published_resource_selector,
            RedisBookmarks(self.queue.redis, agent_prefix(self.settings.agent_name) + "watch"),
            self._enqueue,
            echoes=OwnWrites(self.queue.redis, self.settings.agent_name),
        )
        term_stop = threading.Event()
        thread = threading.Thread(target=watcher.run, args=(term_stop,), name="publish-watcher", daemon=True)
        self._term = (watcher, term_stop, thread)
        thread.start()

    def _stop_term(self) -> None:
        if self._term is not None:
            _, term_stop, thread = self._term
            term_stop.set()
            thread.join(timeout=60)
            self._term = None

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """Ready when leading with every watch synced, or as a standby that sees a leader."""
        if self._term is not None:
            ready, details = self._term[0].ready()
            return ready, {"role": "leader", "identity": self.identity, **details}
        holder = self.elector.observed_holder
        return holder is not None, {"role": "standby", "identity": self.identity, "leader": holder}

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
            if health is not None:
                health.stop()
            log_event(logger, "watch.stopped", identity=self.identity)
