"""What a resync pass enqueues: missing copies (not those of objects still on their first sync),
possible orphans (never a copy synced between the two lists) and deletions."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from syncflow.keys import ObjectKey
from syncflow.sync.resync import first_sync_grace, keys_needing_work
from syncflow.sync.rule import Resource, Side, SyncRule

WIDGETS = Resource(group="example.com", version="v1", plural="widgets", kind="Widget", namespaced=True)
SOURCE_PATH = "/apis/example.com/v1/widgets"


def rule() -> SyncRule:
    return SyncRule(
        name="widgets",
        agent="agent",
        source=Side(endpoint="kcp", resource=WIDGETS),
        target=Side(endpoint="service", resource=WIDGETS),
    )


def stamp(age: float) -> str:
    return datetime.fromtimestamp(time.time() - age, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def source(name: str, age: float, **metadata: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {"kcp.io/cluster": "ws1"},
            "creationTimestamp": stamp(age),
            **metadata,
        }
    }


def copy_of(name: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"copy-{name}",
            "namespace": "ns",
            "labels": {"syncagent.kcp.io/remote-object-cluster": "ws1"},
            "annotations": {
                "syncagent.kcp.io/remote-object-name": name,
                "syncagent.kcp.io/remote-object-namespace": "default",
            },
        }
    }


class Lists:
    """Both API servers as one: each GET answers a collection and is recorded as ``endpoint path``."""

    def __init__(self, sources: list[dict[str, Any]], copies: list[dict[str, Any]]) -> None:
        self.items = {"kcp": sources, "service": copies}
        self.calls: list[str] = []

    def api(self, endpoint: str, cluster: str) -> Any:
        lists = self

        class Api:
            def get(self, path: str, **query: str) -> dict[str, Any]:
                lists.calls.append(endpoint)
                assert path == SOURCE_PATH, path
                return {"items": lists.items[endpoint], "metadata": {}}

        return Api()

    def everywhere(self, endpoint: str) -> list[Any]:
        return [self.api(endpoint, "")]


def names(keys: set[ObjectKey]) -> set[str]:
    return {key.name for key in keys}


def test_a_new_object_without_a_copy_is_left_to_its_first_sync_within_the_grace() -> None:
    lists = Lists(
        [source("new", age=2), source("old", age=120), source("synced", age=2)], [copy_of("synced")]
    )
    assert names(keys_needing_work(rule(), lists, grace=30)) == {"old"}  # type: ignore[arg-type]
    assert names(keys_needing_work(rule(), lists, grace=0)) == {"new", "old"}  # type: ignore[arg-type]


def test_an_object_without_a_creation_time_counts_as_old() -> None:
    undated = source("undated", age=0)
    del undated["metadata"]["creationTimestamp"]
    assert names(keys_needing_work(rule(), Lists([undated], []), grace=30)) == {"undated"}  # type: ignore[arg-type]


def test_copies_are_listed_before_sources_so_a_copy_synced_in_between_is_no_orphan() -> None:
    """A copy whose source is not listed after it is a possible orphan; a new object, however fresh,
    never hides one."""
    lists = Lists([source("kept", age=1), source("going", age=1, deletionTimestamp=stamp(0))], [])
    lists.items["service"] = [copy_of("kept"), copy_of("going"), copy_of("gone")]
    assert names(keys_needing_work(rule(), lists, grace=30)) == {"going", "gone"}  # type: ignore[arg-type]
    assert lists.calls == ["service", "kcp"]


def test_the_grace_is_half_the_period_when_that_is_shorter() -> None:
    assert first_sync_grace(3) == 1.5
    assert first_sync_grace(600) == 30
