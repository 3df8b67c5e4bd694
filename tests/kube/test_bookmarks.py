"""Bookmark stores: in memory and in real Redis, with the same behaviour."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from syncflow.kube.bookmarks import Bookmark, Bookmarks, MemoryBookmarks, RedisBookmarks
from syncflow.kube.refs import ObjectRef
from tests.support.redis import session_redis_url

A, B, C = ObjectRef("", "ns", "a"), ObjectRef("lc1", "", "b"), ObjectRef("lc2", "ns", "c")


@pytest.fixture
def redis_prefix() -> Iterator[tuple[Redis, str]]:
    """Real Redis and a unique key prefix; every key under it is removed afterwards."""
    redis = Redis.from_url(session_redis_url())
    try:
        redis.ping()
    except RedisConnectionError:
        pytest.fail(f"no Redis at {session_redis_url()}")
    prefix = "test-bookmarks-" + uuid.uuid4().hex[:8]
    yield redis, prefix
    keys = list(redis.scan_iter(f"{prefix}:*"))
    if keys:
        redis.delete(*keys)
    redis.close()


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> Bookmarks:
    """Each implementation."""
    if request.param == "memory":
        return MemoryBookmarks()
    redis, prefix = request.getfixturevalue("redis_prefix")
    return RedisBookmarks(redis, prefix)


def test_stores_the_version_and_tracks_known_refs(store: Bookmarks) -> None:
    assert store.get("w") is None
    store.set("w", "10", known=[A, B])
    store.set("w", "11", added=[C])
    store.set("w", "12", removed=[A])
    store.set("w", "13")
    assert store.get("w") == Bookmark("13", frozenset({B, C}))
    store.set("w", "20", known=[A])
    assert store.get("w") == Bookmark("20", frozenset({A}))
    assert store.get("other") is None


def test_redis_layout_uses_the_prefix(redis_prefix: tuple[Redis, str]) -> None:
    redis, prefix = redis_prefix
    RedisBookmarks(redis, prefix).set("cm", "7", known=[B])
    assert redis.get(f"{prefix}:bookmark:{{cm}}") == b"7"
    assert redis.smembers(f"{prefix}:bookmark:{{cm}}:refs") == {b"lc1//b"}


@pytest.mark.parametrize("ref", [A, B, C, ObjectRef("", "", "x")])
def test_refs_round_trip(ref: ObjectRef) -> None:
    assert ObjectRef.decode(ref.encode()) == ref
    assert ObjectRef.of(
        {"metadata": {"name": "n", "namespace": "s", "annotations": {"kcp.io/cluster": "lc"}}}
    ) == (ObjectRef("lc", "s", "n"))
