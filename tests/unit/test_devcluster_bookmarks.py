"""A devcluster watch never sends a bookmark past an event it has not sent yet."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from syncflow.devcluster import watch as watch_module
from syncflow.devcluster.store import Store
from syncflow.devcluster.watch import WatchRequest, WatchStream
from syncflow.util.selectors import FieldSelector, LabelSelector


class Written:
    """A stream response that keeps what is written to it."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    async def write(self, data: bytes) -> None:
        self.lines.append(orjson.loads(data))


def test_an_event_stored_as_the_bookmark_wait_ends_is_sent_before_any_bookmark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wait for the next event times out in the same turn of the loop as an object is stored: the
    event is queued, and a bookmark with the store's version then would claim it was sent."""
    store = Store()
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
    subscription = store.subscribe(None, "", "configmaps", None)
    stream._subscription = subscription
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
    written = Written()
    asyncio.run(stream._follow(SimpleNamespace(transport=object()), written))  # type: ignore[arg-type]
    kinds = [(line["type"], line["object"]["metadata"]["resourceVersion"]) for line in written.lines]
    assert kinds[0] == ("ADDED", str(store.resource_version)), kinds
    assert all(kind != "BOOKMARK" for kind, _ in kinds), "no bookmark while the event waited"
