"""How a devcluster watch writes its events: never a bookmark past an event it has not sent yet, and the
events that wait together in chunks as kube-apiserver's (at most ``CHUNK_BYTES``, a larger event alone)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from syncflow.devcluster import watch as watch_module
from syncflow.devcluster.store import Store
from syncflow.devcluster.watch import CHUNK_BYTES, WatchRequest, WatchStream
from syncflow.util.selectors import FieldSelector, LabelSelector


class Written:
    """A stream response that keeps what is written to it, each write a chunk of the response."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    async def write(self, data: bytes) -> None:
        self.chunks.append(data)

    @property
    def lines(self) -> list[dict[str, Any]]:
        """Every event written, in order."""
        return [event for chunk in self.chunks for event in _events(chunk)]

    def names(self) -> list[list[str]]:
        """The names of each chunk's objects."""
        return [[event["object"]["metadata"]["name"] for event in _events(chunk)] for chunk in self.chunks]


def _events(chunk: bytes) -> list[dict[str, Any]]:
    """The events of one chunk, one per line."""
    return [orjson.loads(line) for line in chunk.splitlines()]


def _stream(store: Store) -> WatchStream:
    """A stream of every cluster's ConfigMaps, subscribed to ``store``."""
    request = WatchRequest(
        None, "", "configmaps", None, "", LabelSelector.parse(""), FieldSelector.parse("", ()), 60.0, True
    )
    stream = WatchStream(
        store,
        request,
        lambda cluster, obj: obj,
        lambda rv: {"metadata": {"resourceVersion": str(rv)}},
        bookmark_interval=60.0,
    )
    stream._subscription = store.subscribe(None, "", "configmaps", None)
    return stream


def _put(store: Store, name: str, data: str = "") -> None:
    obj = {"metadata": {"namespace": "ns", "name": name}, "data": {"v": data}}
    store.put("root", "", "configmaps", obj, None)


def _follow(stream: WatchStream) -> Written:
    written = Written()
    asyncio.run(stream._follow(SimpleNamespace(transport=object()), written))  # type: ignore[arg-type]
    return written


def test_an_event_stored_as_the_bookmark_wait_ends_is_sent_before_any_bookmark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wait for the next event times out in the same turn of the loop as an object is stored: the
    event is queued, and a bookmark with the store's version then would claim it was sent."""
    store = Store()
    stream = _stream(store)
    subscription = stream._subscription
    real_wait_for = asyncio.wait_for
    waits = 0

    async def wait_for(awaitable: Awaitable[Any], timeout: float) -> Any:
        nonlocal waits
        waits += 1
        if waits == 1:  # the wait ends as the object is stored
            awaitable.close()  # type: ignore[attr-defined]
            store.put("root", "", "configmaps", {"metadata": {"namespace": "ns", "name": "late"}}, None)
            raise TimeoutError
        if waits == 2:
            subscription.queue.put_nowait(None)  # then the stream ends
        return await real_wait_for(awaitable, timeout)

    monkeypatch.setattr(watch_module.asyncio, "wait_for", wait_for)
    written = _follow(stream)
    kinds = [(line["type"], line["object"]["metadata"]["resourceVersion"]) for line in written.lines]
    assert kinds[0] == ("ADDED", str(store.resource_version)), kinds
    assert all(kind != "BOOKMARK" for kind, _ in kinds), "no bookmark while the event waited"


def test_events_that_wait_together_go_out_in_one_chunk() -> None:
    store = Store()
    stream = _stream(store)
    for name in ("a", "b", "c"):
        _put(store, name)
    store.end_watches("root", "", "configmaps")
    assert _follow(stream).names() == [["a", "b", "c"]]


def test_a_chunk_holds_at_most_chunk_bytes_and_a_larger_event_goes_alone() -> None:
    store = Store()
    stream = _stream(store)
    _put(store, "small-1")
    _put(store, "large", "x" * CHUNK_BYTES)
    for i in range(2, 40):
        _put(store, f"small-{i}")
    store.end_watches("root", "", "configmaps")
    written = _follow(stream)
    assert [name for names in written.names() for name in names] == [
        "small-1",
        "large",
        *(f"small-{i}" for i in range(2, 40)),
    ]
    assert written.names()[:2] == [["small-1"], ["large"]]
    assert len(written.chunks) > 3 and all(len(chunk) <= CHUNK_BYTES for chunk in written.chunks[2:])
