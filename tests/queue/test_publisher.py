"""Publishing: the keys of one task and Celery queue share messages."""

from __future__ import annotations

import json

import pytest
from redis import Redis

from syncflow.config import load_settings
from syncflow.queue.broker import message_keys
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import broker_prefix
from syncflow.tasks import (
    KEYS_PER_MESSAGE,
    MAX_KEYS_PER_MESSAGE,
    CeleryPublisher,
    create_app,
    keys_per_message,
)
from tests.queue.conftest import REAL_REDIS_URL, delete_agent_keys, unique_agent


def test_keys_of_one_task_and_queue_are_packed_into_few_real_messages() -> None:
    settings = load_settings(agent_name=unique_agent(), redis_url=REAL_REDIS_URL)
    redis = Redis.from_url(REAL_REDIS_URL)
    syncs = [ObjectKey("sync", "r", "root:ws", "ns", f"obj-{i}") for i in range(KEYS_PER_MESSAGE + 2)]
    status = ObjectKey("status", "r", "root:ws", "ns", "obj-0")
    try:
        messages = [(key, "sync") for key in syncs] + [(status, "status"), (syncs[0], "sync-bulk")]
        CeleryPublisher(create_app(settings))(messages)
        prefix = broker_prefix(settings.agent_name)
        stored = {
            queue: [message_keys(json.loads(raw)) for raw in reversed(redis.lrange(prefix + queue, 0, -1))]
            for queue in ("sync", "status", "sync-bulk")
        }
    finally:
        delete_agent_keys(redis, settings.agent_name)
        redis.close()
    assert stored == {
        "sync": [syncs[:KEYS_PER_MESSAGE], syncs[KEYS_PER_MESSAGE:]],
        "status": [[status]],
        "sync-bulk": [[syncs[0]]],
    }


def test_keys_sent_together_share_messages_of_the_largest_size() -> None:
    """The rest of a large message goes back in one message (up to its size), not spread into
    messages of ``KEYS_PER_MESSAGE`` again: each message costs Celery a publish and a delivery."""
    settings = load_settings(agent_name=unique_agent(), redis_url=REAL_REDIS_URL)
    redis = Redis.from_url(REAL_REDIS_URL)
    rest = [ObjectKey("sync", "r", "root:ws", "ns", f"obj-{i}") for i in range(MAX_KEYS_PER_MESSAGE + 5)]
    try:
        CeleryPublisher(create_app(settings))([(key, "sync-bulk") for key in rest], together=True)
        raw = redis.lrange(broker_prefix(settings.agent_name) + "sync-bulk", 0, -1)
        stored = [message_keys(json.loads(message)) for message in reversed(raw)]
    finally:
        delete_agent_keys(redis, settings.agent_name)
        redis.close()
    assert stored == [rest[:MAX_KEYS_PER_MESSAGE], rest[MAX_KEYS_PER_MESSAGE:]]
    assert keys_per_message(len(rest)) == KEYS_PER_MESSAGE, "the same send, not together, is spread"


@pytest.mark.parametrize(
    ("keys", "per_message"),
    [
        (1, KEYS_PER_MESSAGE),
        (128, KEYS_PER_MESSAGE),
        (129, 9),
        (1000, 63),
        (1024, MAX_KEYS_PER_MESSAGE),
        (10**5, 64),
    ],
)
def test_a_large_send_goes_in_few_larger_messages(keys: int, per_message: int) -> None:
    assert keys_per_message(keys) == per_message


def test_a_large_message_shows_every_key_as_its_arguments() -> None:
    settings = load_settings(agent_name=unique_agent(), redis_url=REAL_REDIS_URL)
    redis = Redis.from_url(REAL_REDIS_URL)
    syncs = [ObjectKey("sync", "rule", "root:org:workspace", "namespace", f"object-{i}") for i in range(1024)]
    try:
        CeleryPublisher(create_app(settings))([(key, "sync-bulk") for key in syncs])
        raw = redis.lrange(broker_prefix(settings.agent_name) + "sync-bulk", 0, -1)
        messages = [json.loads(message) for message in reversed(raw)]
    finally:
        delete_agent_keys(redis, settings.agent_name)
        redis.close()
    assert [len(message_keys(m)) for m in messages] == [MAX_KEYS_PER_MESSAGE] * 16
    shown = messages[0]["headers"]["argsrepr"]
    assert "..." not in shown and str(syncs[MAX_KEYS_PER_MESSAGE - 1]) in shown
