"""Where a watch keeps its last resourceVersion and the refs it knows, so a restart can resume.

The known refs let a ``410 Gone`` relist after a restart still report objects deleted while the
watcher was away (the union of known and listed refs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from redis import Redis

from syncflow.kube.refs import ObjectRef


@dataclass(frozen=True)
class Bookmark:
    """A watch's resume point: the resourceVersion and the refs known at that version."""

    resource_version: str
    refs: frozenset[ObjectRef] = field(default_factory=frozenset)


class Bookmarks(Protocol):
    """Stores one ``Bookmark`` per watch name."""

    def get(self, name: str) -> Bookmark | None:
        """The stored bookmark, or None when the watch must list."""

    def set(
        self,
        name: str,
        resource_version: str,
        *,
        known: Iterable[ObjectRef] | None = None,
        added: Iterable[ObjectRef] = (),
        removed: Iterable[ObjectRef] = (),
    ) -> None:
        """Store ``resource_version``; ``known`` replaces the refs, ``added``/``removed`` adjust them."""

    def forget(self, name: str) -> None:
        """Drop the bookmark: the next watch of that name lists from scratch."""


class MemoryBookmarks:
    """Bookmarks in this process (tests, or runs without Redis)."""

    def __init__(self) -> None:
        self._rvs: dict[str, str] = {}
        self._refs: dict[str, set[ObjectRef]] = {}

    def get(self, name: str) -> Bookmark | None:
        """The stored bookmark, or None."""
        rv = self._rvs.get(name)
        return None if rv is None else Bookmark(rv, frozenset(self._refs.get(name, ())))

    def set(
        self,
        name: str,
        resource_version: str,
        *,
        known: Iterable[ObjectRef] | None = None,
        added: Iterable[ObjectRef] = (),
        removed: Iterable[ObjectRef] = (),
    ) -> None:
        """Store the resourceVersion and update the refs."""
        refs = self._refs.setdefault(name, set())
        if known is not None:
            refs.clear()
            refs.update(known)
        refs.update(added)
        refs.difference_update(removed)
        self._rvs[name] = resource_version

    def forget(self, name: str) -> None:
        """Drop the bookmark."""
        self._rvs.pop(name, None)
        self._refs.pop(name, None)


class RedisBookmarks:
    """Bookmarks in Redis: the RV at ``<prefix>:bookmark:{<name>}``, refs in the set ``...:refs``; the
    hash tag keeps both in one Redis Cluster slot, so one transaction updates them (a bookmark stored
    under the untagged names of earlier versions is not read: that watch lists once, as at a first start)."""

    def __init__(self, redis: Redis, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix

    def _keys(self, name: str) -> tuple[str, str]:
        key = f"{self.prefix}:bookmark:{{{name}}}"
        return key, key + ":refs"

    def get(self, name: str) -> Bookmark | None:
        """The stored bookmark, or None."""
        rv_key, refs_key = self._keys(name)
        pipe = self.redis.pipeline(transaction=True)
        pipe.get(rv_key)
        pipe.smembers(refs_key)
        rv, members = pipe.execute()
        if rv is None:
            return None
        text = rv.decode() if isinstance(rv, bytes) else str(rv)
        refs = frozenset(ObjectRef.decode(m.decode() if isinstance(m, bytes) else m) for m in members)
        return Bookmark(text, refs)

    def set(
        self,
        name: str,
        resource_version: str,
        *,
        known: Iterable[ObjectRef] | None = None,
        added: Iterable[ObjectRef] = (),
        removed: Iterable[ObjectRef] = (),
    ) -> None:
        """Store the resourceVersion and update the refs in one transaction."""
        rv_key, refs_key = self._keys(name)
        pipe = self.redis.pipeline(transaction=True)
        if known is not None:
            pipe.delete(refs_key)
            _chunked(pipe.sadd, refs_key, [ref.encode() for ref in known])
        _chunked(pipe.sadd, refs_key, [ref.encode() for ref in added])
        _chunked(pipe.srem, refs_key, [ref.encode() for ref in removed])
        pipe.set(rv_key, resource_version)
        pipe.execute()

    def forget(self, name: str) -> None:
        """Drop the bookmark and its refs."""
        self.redis.delete(*self._keys(name))


def _chunked(command: Callable[..., Any], key: str, members: list[str], size: int = 10_000) -> None:
    for start in range(0, len(members), size):
        command(key, *members[start : start + size])
