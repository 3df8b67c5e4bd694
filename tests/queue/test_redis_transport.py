"""The Redis broker transport on a real Redis: one client per connection pool for its publishes, events
and acknowledgements, a new one when kombu drops the pool, and a closed channel still says so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kombu import Connection  # type: ignore[attr-defined]
from redis.exceptions import ConnectionError as RedisConnectionError

from syncflow.queue import redistransport
from tests.support.redis import session_redis_url

pytestmark = pytest.mark.integration


@pytest.fixture
def channel() -> Iterator[redistransport.Channel]:
    """A channel of the transport on the session's real Redis."""
    with Connection(session_redis_url(), transport=redistransport.TRANSPORT) as connection:
        yield connection.default_channel


def test_a_channel_keeps_one_client_per_connection_pool(channel: redistransport.Channel) -> None:
    with channel.conn_or_acquire() as first, channel.conn_or_acquire() as second:
        assert first is second and first.connection_pool is channel.pool
        assert first.ping()
    given = object()
    with channel.conn_or_acquire(given) as client:
        assert client is given
    channel._disconnect_pools()  # what kombu does when the connection is lost
    with channel.conn_or_acquire() as after:
        assert after is not first and after.connection_pool is channel.pool and after.ping()


def test_a_closed_channel_still_says_its_connection_is_closed(channel: redistransport.Channel) -> None:
    with channel.conn_or_acquire():
        pass
    channel.connection.client = None
    channel._disconnect_pools()
    with pytest.raises(RedisConnectionError, match="closed"), channel.conn_or_acquire():
        pass
