"""The Redis client of syncflow's state: one Redis, or a Redis Cluster for ``redis+cluster://`` URLs."""

from __future__ import annotations

from typing import Any, cast

from redis import Redis
from redis.cluster import RedisCluster

from syncflow.config import is_cluster_url


def connect_redis(url: str, **options: Any) -> Redis:
    """A client for ``url`` with redis-py's connection ``options`` (timeouts, keep-alive).

    A ``redis+cluster://host:port`` URL (or ``rediss+cluster://``) gives a ``RedisCluster`` that
    discovers the other nodes from the one named. It is typed as ``Redis``: it offers every command
    syncflow sends (scripts, pipelines, locks, scans), and every script touches keys of one slot.
    """
    if is_cluster_url(url):
        scheme, _, rest = url.partition("+cluster://")
        return cast(Redis, RedisCluster.from_url(f"{scheme}://{rest}", **options))
    return Redis.from_url(url, **options)
