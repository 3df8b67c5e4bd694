"""Tasks sent by name (beat, Flower's send-task, ``celery call``) reach their queue through
``task_routes``, not through Celery's deprecated ``queue`` task attribute."""

from __future__ import annotations

import importlib

import pytest

from syncflow import tasks
from syncflow.config import load_settings
from syncflow.queue.layout import CONTROL_QUEUE, PERIODIC_QUEUE
from syncflow.queue.registry import queue_of
from syncflow.tasks import create_app

MODES = ("publish", "workload", "edge", "clusters")
PERIODIC = (
    "syncflow.resync",
    "syncflow.status-poll",
    "syncflow.poll-tick",
    "syncflow.pump",
    "syncflow.workload-tick",
    "syncflow.clusters-tick",
    "syncflow.edge-tick",
    "syncflow.publish-tick",
    "syncflow.clusters-heartbeat",
)
DEPRECATED_ROUTING_ATTRIBUTES = (
    "queue",
    "exchange",
    "exchange_type",
    "routing_key",
    "delivery_mode",
    "priority",
)
"""The task attributes Celery 5.7 warns about and 6.0 ignores."""


@pytest.fixture(scope="module")
def registered() -> dict[str, object]:
    """syncflow's tasks of every mode, by name."""
    for mode in MODES:
        importlib.import_module(f"syncflow.modes.{mode}.tasks")
    return {name: task for name, task in tasks.app.tasks.items() if name.startswith("syncflow.")}


def expected_queue(name: str) -> str:
    if name in PERIODIC:
        return PERIODIC_QUEUE
    if name == "syncflow.replay":
        return CONTROL_QUEUE
    return queue_of(name.removeprefix("syncflow."))


def test_every_task_sent_by_name_is_routed_to_its_queue(registered: dict[str, object]) -> None:
    router = create_app(load_settings()).amqp.router
    assert {"syncflow.sync", "syncflow.status", "syncflow.heartbeat", "syncflow.cluster"} <= set(registered)
    assert set(PERIODIC) | {"syncflow.replay"} <= set(registered)
    for name, task in registered.items():
        routed = router.route({}, name, (), {}, task)
        assert routed["queue"].name == expected_queue(name), name


def test_a_queue_the_sender_names_wins(registered: dict[str, object]) -> None:
    router = create_app(load_settings()).amqp.router
    routed = router.route({"queue": "sync-bulk"}, "syncflow.sync", (), {}, registered["syncflow.sync"])
    assert routed["queue"].name == "sync-bulk"


def test_no_task_declares_a_deprecated_routing_attribute(registered: dict[str, object]) -> None:
    for name, task in registered.items():
        declared = [
            attr for attr in DEPRECATED_ROUTING_ATTRIBUTES if type(task).__dict__.get(attr) is not None
        ]
        assert not declared, f"{name} declares {declared}"
