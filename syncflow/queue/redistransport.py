"""kombu's Redis transport, with a closed connection reported as a connection error.

With celery/kombu 5.7, a message acknowledged (or the unacked ones restored) after the broker
connection closed builds a new Redis client from the channel's connection, which is gone by then:
kombu raises ``AttributeError`` (``'NoneType' object has no attribute 'hostname'``), which Celery
treats as unrecoverable and the worker exits. Raised as Redis's ``ConnectionError`` instead, it is
what it is: a lost connection, which Celery logs and recovers from. The message stays unacked, is
restored after the visibility timeout, and finds its key no longer pending (dropped at its claim).
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

TRANSPORT = "syncflow.queue.redistransport:Transport"
"""The ``broker_transport`` setting that selects this transport."""
SCHEMES = frozenset({"redis", "rediss"})
"""Broker URL schemes this transport serves."""


class Channel(kombu_redis.Channel):
    """kombu's Redis channel; its connection parameters raise ``ConnectionError`` once closed."""

    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection.client is None:
            raise RedisConnectionError("the broker connection is closed")
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[no-untyped-call]


class Transport(kombu_redis.Transport):
    """kombu's Redis transport with :class:`Channel`."""

    Channel = Channel
