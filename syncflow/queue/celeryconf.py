"""Celery settings for the keyed queue design (docs/architecture.md §5.2, reference notes §1)."""

from __future__ import annotations

from typing import Any

from kombu import Queue  # type: ignore[attr-defined]

from syncflow.config import Settings
from syncflow.queue import redistransport
from syncflow.queue.layout import CELERY_QUEUES, CONTROL_QUEUE, PERIODIC_QUEUE, broker_prefix


def broker_transport_options(settings: Settings) -> dict[str, Any]:
    """kombu's transport options for the configured broker (Redis or RabbitMQ)."""
    if settings.broker_kind == "amqp":
        # A publish returns once RabbitMQ has taken the message: on this broker the pump can prove a
        # message lost only when the queues are empty (syncflow.queue.broker), so none is lost silently.
        return {"confirm_publish": True}
    return {
        "visibility_timeout": settings.visibility_timeout,
        "global_keyprefix": broker_prefix(settings.agent_name),
        # Sweep abandoned unacked messages every 10 s instead of kombu's default ~100 s.
        "unacked_restore_interval": 10,
        "unacked_restore_throttle": 1,
        "socket_timeout": 30,
        "socket_connect_timeout": 5,
        "socket_keepalive": True,
        "health_check_interval": 30,
    }


def route_by_task(
    name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **_: Any
) -> dict[str, str] | None:
    """Celery router: a registered task sent by name (beat, Flower's send-task, ``celery call``) goes
    to the queue its registration names, ``app.task(..., syncflow_queue=...)`` (Celery's own ``queue``
    task attribute is deprecated for ``task_routes``); a queue the sender names wins."""
    queue = getattr(task, "syncflow_queue", None)
    return {"queue": queue} if queue else None


def celery_queues(settings: Settings) -> list[Queue]:
    """syncflow's Celery queues; on RabbitMQ quorum queues when ``broker_quorum_queues`` is set."""
    arguments = {"x-queue-type": "quorum"} if settings.broker_quorum_queues else None
    return [
        Queue(name, routing_key=name, durable=True, queue_arguments=arguments)  # type: ignore[no-untyped-call]
        for name in CELERY_QUEUES
    ]


def celery_config(settings: Settings) -> dict[str, Any]:
    """The Celery configuration of syncflow's app for these settings."""
    scheme = settings.celery_broker_url.partition("://")[0]
    return {
        "broker_url": settings.celery_broker_url,
        # a Redis broker's closed connection is a connection error, not the end of the worker
        "broker_transport": redistransport.TRANSPORT if scheme in redistransport.SCHEMES else None,
        "broker_transport_options": broker_transport_options(settings),
        # The notes: set the visibility timeout in all three places, or some code paths use 1 h.
        "result_backend_transport_options": {"visibility_timeout": settings.visibility_timeout},
        "visibility_timeout": settings.visibility_timeout,
        "broker_connection_retry_on_startup": True,
        "result_backend": None,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_queues": celery_queues(settings),
        "task_default_queue": "sync",
        # Messages sent by name (beat, Flower's send-task) reach the right queue too; the two by
        # name also from a process that did not import the task modules.
        "task_routes": (
            {"syncflow.pump": {"queue": PERIODIC_QUEUE}, "syncflow.replay": {"queue": CONTROL_QUEUE}},
            route_by_task,
        ),
        "task_create_missing_queues": False,
        # A message is acked after the run; a dead pool child's message is requeued.
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_acks_on_failure": True,
        "task_acks_on_timeout": True,
        "worker_prefetch_multiplier": 1,
        # A task still running when the broker connection drops would run again in parallel.
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "task_time_limit": settings.task_time_limit,
        "task_soft_time_limit": settings.task_time_limit * 0.9,
        "worker_send_task_events": True,
        # Task events go out in batches, not one broker publish each (syncflow.queue.consumer).
        "worker_consumer": "syncflow.queue.consumer:BatchedEventsConsumer",
        # No task-sent events: each would be a second Redis publish per key (relists enqueue
        # thousands); Flower still sees every task from the moment a worker receives it.
        "task_send_sent_event": False,
        "worker_hijack_root_logger": False,
        "broker_connection_max_retries": None,
    }
