"""A Celery worker's ``/metrics`` and ``/healthz``/``/readyz``, served by its master process.

Ready when the worker has started consuming, its broker connection is up and Redis answers a PING
within ``REDIS_TIMEOUT`` — checks that take bounded time, so a probe never hangs. Metrics come from
every prefork child through prometheus-client's multiprocess files (syncflow.metrics.multiprocess).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import signals
from redis import RedisError

from syncflow.config import Settings
from syncflow.metrics import celery as celery_metrics
from syncflow.metrics import multiprocess
from syncflow.queue.redisclient import connect_redis
from syncflow.util.health import HealthServer
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.worker")

REDIS_TIMEOUT = 1.0


class WorkerReadiness:
    """Readiness of this worker: consuming, broker connected, Redis answering."""

    def __init__(self, redis_url: str) -> None:
        self.redis = connect_redis(
            redis_url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
        )
        self.consumer: Any = None

    def started(self, sender: Any = None, **_: Any) -> None:
        """Celery's ``worker_ready``: the consumer (sender) is consuming."""
        self.consumer = sender

    def broker(self) -> str:
        """``connected``, ``starting`` or ``disconnected`` (no I/O: the consumer's own view)."""
        if self.consumer is None:
            return "starting"
        connection = getattr(self.consumer, "connection", None)
        return "connected" if connection is not None and connection.connected else "disconnected"

    def redis_status(self) -> str:
        """``ok`` or the error of one PING."""
        try:
            self.redis.ping()
        except RedisError as exc:
            return f"{type(exc).__name__}: {exc}"[:200]
        return "ok"

    def __call__(self) -> tuple[bool, dict[str, Any]]:
        broker, redis = self.broker(), self.redis_status()
        return broker == "connected" and redis == "ok", {"broker": broker, "redis": redis}


def observe(settings: Settings) -> None:
    """Before the worker starts (in its master): metrics of every child, then the servers asked for.
    With a metrics address, ``multiprocess.prepare`` must have run before any metric existed."""
    serving_metrics = bool(settings.metrics_address)
    if serving_metrics or multiprocess.directory():  # alone, or one role of an all-in-one agent
        celery_metrics.connect()
    if serving_metrics:
        from syncflow.metrics import exposition

        exposition.serve(settings, "worker")
    if settings.health_address:
        readiness = WorkerReadiness(settings.redis_url)
        signals.worker_ready.connect(readiness.started, weak=False)
        health = HealthServer(settings.health_address, readiness)
        health.start()
        log_event(
            logger,
            "worker.health_serving",
            address=f"{settings.health_address.rpartition(':')[0]}:{health.port}",
        )
