"""A lost Redis is one line when it goes and one when it answers again; other errors are not it."""

from __future__ import annotations

import logging
import threading
from typing import Any, cast

import pytest
import redis.exceptions
import urllib3.exceptions

from syncflow.queue.reachability import BROKER_ERRORS, Reachability
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.watcher import TermWatcher


def events(caplog: pytest.LogCaptureFixture) -> list[tuple[str, dict[str, Any]]]:
    return [(r.getMessage(), getattr(r, "syncflow_fields", {})) for r in caplog.records]


def refused() -> redis.exceptions.ConnectionError:
    """A redis-py connection error as it is raised: over the socket's error."""
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as exc:
            raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:1.") from exc
    except redis.exceptions.ConnectionError as error:
        return error


def test_a_loss_is_said_once_with_url_and_reason_and_the_return_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="syncflow.reachability")
    reach = Reachability("redis://:secret@127.0.0.1:6390/2")
    reach.answered()
    for _ in range(3):
        assert reach.failed(refused())
    reach.answered()
    reach.answered()
    assert events(caplog) == [
        (
            "redis.unreachable",
            {"url": "redis://:***@127.0.0.1:6390/2", "error": "Connection refused", "retrying": True},
        ),
        ("redis.reachable", {"url": "redis://:***@127.0.0.1:6390/2"}),
    ]


def test_only_connection_errors_of_its_server_count() -> None:
    reach = Reachability("redis://127.0.0.1:6379/0")
    api_down = urllib3.exceptions.MaxRetryError(None, "/api", ConnectionRefusedError(111, "refused"))  # type: ignore[arg-type]
    assert not reach.failed(api_down), "a kube API server that is down is not Redis"
    assert not reach.failed(redis.exceptions.ResponseError("WRONGTYPE"))
    assert not reach.down
    assert Reachability("amqp://rabbit//", BROKER_ERRORS).failed(ConnectionRefusedError(111, "refused"))


class FailingManager:
    """A sync manager whose passes fail with ``errors`` in turn, then stop the watcher."""

    def __init__(self, errors: list[Exception], stop: threading.Event) -> None:
        self.errors = errors
        self.stop = stop
        self.redis = Reachability("redis://127.0.0.1:6379/0")

    def reconcile(self) -> None:
        if not self.errors:
            self.stop.set()
            return
        raise self.errors.pop(0)

    def stop_all(self) -> None:
        """Nothing runs."""


def test_the_watcher_says_a_lost_redis_once_and_other_failures_each_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    stop = threading.Event()
    errors: list[Exception] = [refused(), refused(), ValueError("bad rule"), refused()]
    watcher = TermWatcher(cast(SyncManager, FailingManager(errors, stop)), interval=0)
    watcher.run(stop)
    assert [name for name, _ in events(caplog)] == [
        "redis.unreachable",
        "watch.manager_failed",
        "redis.reachable",
    ]
