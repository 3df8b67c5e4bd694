"""The work queue's gauges, read from Redis at scrape time: a few round trips, each with a timeout."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import fields

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from redis import Redis, RedisError

from syncflow.config import Settings
from syncflow.queue.broker import BrokerUnavailableError
from syncflow.queue.keys import ObjectKey
from syncflow.queue.redisclient import connect_redis
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import QueueStats
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.metrics")

REDIS_TIMEOUT = 2.0
"""Seconds one Redis call of a scrape may take (Prometheus' default scrape timeout is 10 s)."""
STATES = tuple(f.name for f in fields(QueueStats) if f.name != "queue")
"""dirty, pending, leased, delayed, parked — as ``syncflow queue`` shows them."""


def _never_publish(messages: Sequence[tuple[ObjectKey, str]], /, *, together: bool = False) -> None:
    raise RuntimeError("the metrics collector only reads the queue")


class QueueCollector(Collector):
    """``syncflow_queue_keys{queue,state}``, ``workqueue_depth{name}`` (controller-runtime's: the
    pending keys of each keyed queue), ``syncflow_queue_messages{queue}`` and ``syncflow_redis_up``."""

    def __init__(self, settings: Settings, redis: Redis | None = None) -> None:
        redis = redis or connect_redis(
            settings.redis_url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
        )
        self.service = QueueService(redis, settings, _never_publish)

    def _backlog(self) -> dict[str, int]:
        """Messages per Celery queue; none when a RabbitMQ broker does not answer (Redis still counts)."""
        try:
            return self.service.broker_backlog()
        except BrokerUnavailableError as exc:
            log_event(logger, "metrics.broker_failed", level=logging.WARNING, error=str(exc))
            return {}

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("syncflow_redis_up", "1 when this scrape read the work queue from Redis.")
        try:
            stats = self.service.stats()
            backlog = self._backlog()
        except RedisError as exc:
            error = f"{type(exc).__name__}: {exc}"
            log_event(logger, "metrics.redis_failed", level=logging.WARNING, error=error)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        keys = GaugeMetricFamily(
            "syncflow_queue_keys",
            "Keys per keyed work queue and state (as syncflow queue shows them).",
            labels=["queue", "state"],
        )
        for queue in stats:
            for state in STATES:
                keys.add_metric([queue.queue, state], getattr(queue, state))
        yield keys
        depth = GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=["name"])
        for queue in stats:
            depth.add_metric([queue.queue], queue.pending)
        yield depth
        messages = GaugeMetricFamily(
            "syncflow_queue_messages",
            "Messages waiting in each Celery queue's broker list.",
            labels=["queue"],
        )
        for name, count in backlog.items():
            messages.add_metric([name], count)
        yield messages
