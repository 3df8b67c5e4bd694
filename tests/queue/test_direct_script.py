"""Scripts sent straight on a pooled connection (``DirectScript``) answer as redis-py's ``Script`` does,
and fail as its client fails (real Redis; a proxy that holds a reply back and cuts the connection)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any
from urllib.parse import urlsplit

import pytest
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.retry import Retry

from syncflow.queue.redisclient import connect_redis
from syncflow.queue.scripts import DirectScript
from tests.support.proxy import tcp_proxy
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for

COUNTING = "local n = redis.call('INCR', KEYS[1]) return {n, ARGV[1], tonumber(ARGV[2]) + 1}"
"""Counts its runs in ``KEYS[1]``; answers the run's number, ``ARGV[1]`` and ``ARGV[2]`` + 1."""


@pytest.fixture
def redis() -> Iterator[Redis]:
    client = connect_redis(session_redis_url(), socket_timeout=5)
    yield client
    client.close()


@pytest.fixture
def counter(redis: Redis) -> Iterator[str]:
    key = f"syncflow-test:direct:{uuid.uuid4().hex}"
    yield key
    redis.delete(key)


def test_a_direct_script_answers_as_redis_py_s_script_does(redis: Redis, counter: str) -> None:
    direct = DirectScript(redis, COUNTING)
    assert direct([counter], ["x", 4]) == [1, b"x", 5]
    assert direct.registered([counter], ["y", 0]) == [2, b"y", 1]
    assert direct.script == COUNTING


def test_a_script_redis_no_longer_holds_is_loaded_and_run_once(redis: Redis, counter: str) -> None:
    direct = DirectScript(redis, COUNTING)
    direct([counter], ["x", 0])
    redis.script_flush()
    assert direct([counter], ["x", 0]) == [2, b"x", 1]
    assert redis.get(counter) == b"2"


def test_an_error_of_the_script_is_raised_as_the_client_raises_it(redis: Redis) -> None:
    direct = DirectScript(redis, "return redis.error_reply('BUSY held by another run')")
    with pytest.raises(ResponseError, match="held by another run"):
        direct()


def call_losing_its_reply(redis: Redis, counter: str, **options: Any) -> Future[Any]:
    """A ``DirectScript`` call, through a proxy, whose first send runs in Redis but whose reply never
    comes (its connection cut; replies pass again once it is); returns the finished call, after the
    next call on the same client was answered. ``options``: the proxied client's."""
    with tcp_proxy(session_redis_url()) as proxy, ThreadPoolExecutor(1) as pool:
        proxied = connect_redis(proxy.url + urlsplit(session_redis_url()).path, socket_timeout=5, **options)
        direct = DirectScript(proxied, COUNTING)
        proxied.script_load(COUNTING)  # loaded now: a NOSCRIPT reply must not be the one held
        proxy.hold_replies()
        calling = pool.submit(direct, [counter], ["x", 0])
        wait_for(lambda: redis.get(counter) == b"1", what="the script to run in Redis")
        proxy.cut()
        proxy.resume()
        wait([calling], timeout=30)
        assert direct([counter], ["y", 0])[1] == b"y", "the next call is answered"
        proxied.close()
    return calling


def test_a_call_whose_reply_is_lost_raises_as_the_client_does(redis: Redis, counter: str) -> None:
    """syncflow's clients retry nothing themselves (the lease scripts' callers send again, knowing
    what a second run means)."""
    with pytest.raises(RedisConnectionError):
        call_losing_its_reply(redis, counter).result(timeout=0)
    assert redis.get(counter) == b"2", "run once, then once more by the next call"


def test_a_call_whose_reply_is_lost_is_retried_as_the_client_s_retry_says(redis: Redis, counter: str) -> None:
    assert call_losing_its_reply(redis, counter, retry=Retry(NoBackoff(), 1)).result(timeout=0) == [
        2,
        b"x",
        1,
    ]
    assert redis.get(counter) == b"3", "run, run again by the retry, then by the next call"


class CountingRedis(Redis):
    """A client of its own class (as a Redis Cluster client is) that counts the EVALSHAs it sends."""

    evalshas = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if args[0] == "EVALSHA":
            self.evalshas += 1
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def test_other_clients_and_calls_on_another_client_go_the_client_s_way(redis: Redis, counter: str) -> None:
    """Only a plain ``Redis`` has its pool used directly; a call on another client (a pipeline) is
    that client's."""
    own = CountingRedis.from_url(session_redis_url())
    assert isinstance(own, CountingRedis)
    assert DirectScript(own, COUNTING)([counter], ["x", 1]) == [1, b"x", 2]
    assert own.evalshas == 1
    own.close()
    direct = DirectScript(redis, COUNTING)
    pipeline = redis.pipeline()
    direct([counter], ["x", 0], client=pipeline)
    assert pipeline.execute() == [[2, b"x", 1]]
