"""syncflow's own Celery tasks, run through Celery's task machinery on the real Redis."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kombu.utils.encoding import safe_repr
from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow import tasks
from syncflow.config import Settings, load_settings
from syncflow.queue.keys import ObjectKey
from syncflow.queue.workqueue import Outcome
from tests.queue.conftest import REAL_REDIS_URL, delete_agent_keys, unique_agent

KEY = ObjectKey("sync", "rule", "root:ws", "ns", "obj")


@pytest.fixture
def bound() -> Iterator[Settings]:
    """syncflow's app and runtime bound to a fresh agent on the real Redis."""
    settings = load_settings(agent_name=unique_agent(), redis_url=REAL_REDIS_URL)
    tasks.bind(settings)
    # no worker here: drop the messages
    tasks.runtime.service.publisher = lambda messages, together=False: None
    yield settings
    delete_agent_keys(Redis.from_url(REAL_REDIS_URL), settings.agent_name)


def test_replay_of_a_key_that_is_not_parked_is_a_task_failure(bound: Settings) -> None:
    result = tasks.replay.apply(args=[str(KEY)])
    assert result.failed()
    assert str(result.result) == f"key {KEY} is not parked"


def test_replay_of_a_parked_key_succeeds(bound: Settings) -> None:
    service = tasks.runtime.service
    queue = service.queue_for(KEY)
    service.add(KEY)
    queue.claim(KEY, "t")
    queue.done(KEY, "t", Outcome.PERMANENT, error="{}")
    result = tasks.replay.apply(args=[str(KEY)])
    assert result.successful() and result.result is True
    assert not queue.is_parked(KEY)


@tasks.keyed_task("missing-dependency")
def missing_dependency(key: ObjectKey) -> None:
    """Fails as the kubernetes client does when an object is not there."""
    error = ApiException(status=404, reason="Not Found")
    error.body = json.dumps({"kind": "Status", "message": f'secrets "{key.name}" not found' + " !" * 1000})
    raise error


def test_a_failed_task_shows_the_api_errors_status_and_reason_and_the_key_is_parked(bound: Settings) -> None:
    key = ObjectKey("missing-dependency", "rule", "root:ws", "ns", "web-tls")
    service = tasks.runtime.service
    service.add(key)
    result = tasks.app.tasks["syncflow.missing-dependency"].apply(args=[str(key)])
    assert result.failed()
    shown = safe_repr(result.result)  # what the task-failed event carries to Flower
    assert shown.startswith("""ApiException('404 Not Found: secrets "web-tls" not found !"""), shown
    assert len(shown) < 600, "bounded"
    assert service.queue_for(key).is_parked(key), "a 404 still parks the key"
