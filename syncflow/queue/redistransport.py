"""kombu's Redis transport, with a closed connection reported as a connection error and one Redis
client per channel.

With celery/kombu 5.7, a message acknowledged (or the unacked ones restored) after the broker
connection closed builds a new Redis client from the channel's connection, which is gone by then:
kombu raises ``AttributeError`` (``'NoneType' object has no attribute 'hostname'``), which Celery
treats as unrecoverable and the worker exits. Raised as Redis's ``ConnectionError`` instead, it is
what it is: a lost connection, which Celery logs and recovers from. The message stays unacked, is
restored after the visibility timeout, and finds its key no longer pending (dropped at its claim).

kombu 5.7 also builds a new Redis client for each publish, Celery event and acknowledgement (its
``conn_or_acquire``): redis-py fills a table of some 170 reply callbacks each time, and a publish
took 343 µs of CPU instead of 180. The channel here keeps one client per connection pool: redis-py's
clients are thread-safe, and each command still takes a connection from the pool. A pool kombu drops
(a lost connection) gets a new client.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

TRANSPORT = "syncflow.queue.redistransport:Transport"
"""The ``broker_transport`` setting that selects this transport."""
SCHEMES = frozenset({"redis", "rediss"})
"""Broker URL schemes this transport serves."""


class Channel(kombu_redis.Channel):
    """kombu's Redis channel; its connection parameters raise ``ConnectionError`` once closed, and it
    keeps the client it publishes and acknowledges with."""

    _kept_client: Any = None

    @contextmanager
    def conn_or_acquire(self, client: Any = None) -> Iterator[Any]:
        """``client`` if given, else the channel's client for its current connection pool."""
        if client:
            yield client
            return
        kept = self._kept_client
        if kept is None or kept.connection_pool is not self.pool:
            kept = self._kept_client = self._create_client()  # type: ignore[no-untyped-call]
        yield kept

    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection.client is None:
            raise RedisConnectionError("the broker connection is closed")
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[no-untyped-call]


class Transport(kombu_redis.Transport):
    """kombu's Redis transport with :class:`Channel`."""

    Channel = Channel
