"""One SCAN step over one queue structure: its hash, zset or set, the next cursor and the names."""

from __future__ import annotations

from typing import cast

from redis import Redis

_HASHES = frozenset("XK")
_ZSETS = frozenset(("W", "L", "P"))


def scan_step(
    redis: Redis, name: str, structure: str, cursor: int, match: str, count: int
) -> tuple[int, list[str]]:
    """One HSCAN/ZSCAN/SSCAN call of ``structure`` (Redis key ``name``) from ``cursor``; returns the
    next cursor (0: done) and the member names it gave."""
    members: list[bytes | str]
    if structure in _HASHES:
        cursor, found = redis.hscan(name, cursor, match=match, count=count)  # NOVALUES needs Redis 7.4
        members = list(found)
    elif structure in _ZSETS:
        cursor, pairs = redis.zscan(name, cursor, match=match, count=count)
        members = [cast("bytes | str", member) for member, _ in pairs]
    else:
        cursor, found = redis.sscan(name, cursor, match=match, count=count)
        members = list(found)
    return int(cursor), [m.decode() if isinstance(m, bytes) else m for m in members]
