"""The Redis broker transport reports a closed connection as a connection error (which Celery recovers
from), never as the AttributeError that ended workers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from syncflow.config import load_settings
from syncflow.queue import redistransport
from syncflow.queue.celeryconf import celery_config


def test_a_closed_connection_is_a_connection_error() -> None:
    closed = SimpleNamespace(connection=SimpleNamespace(client=None))
    with pytest.raises(RedisConnectionError, match="closed"):
        redistransport.Channel._connparams(closed)  # type: ignore[arg-type]


def test_redis_brokers_use_it_and_rabbitmq_keeps_its_own() -> None:
    redis = load_settings(agent_name="a", redis_url="redis://127.0.0.1:6379/0")
    rabbit = load_settings(agent_name="a", redis_url="redis://127.0.0.1:6379/0", broker_url="amqp://h:5672//")
    assert celery_config(redis)["broker_transport"] == redistransport.TRANSPORT
    assert celery_config(rabbit)["broker_transport"] is None
    assert redistransport.Transport.Channel is redistransport.Channel
