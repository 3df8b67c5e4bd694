"""What a resync pass enqueues: missing copies (not those whose key the queue already holds), possible
orphans (never a copy synced between the two lists) and deletions."""

from __future__ import annotations

from typing import Any

from syncflow.queue.keys import ObjectKey
from syncflow.sync.resync import keys_needing_work
from syncflow.sync.rule import Resource, Selector, Side, SyncRule
from tests.support.copies import copy_of

WIDGETS = Resource(group="example.com", version="v1", plural="widgets", kind="Widget", namespaced=True)
SOURCE_PATH = "/apis/example.com/v1/widgets"


def rule() -> SyncRule:
    return SyncRule(
        name="widgets",
        agent="agent",
        source=Side(endpoint="kcp", resource=WIDGETS),
        target=Side(endpoint="service", resource=WIDGETS),
    )


def source(name: str, **metadata: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {"kcp.io/cluster": "ws1"},
            **metadata,
        }
    }


class Lists:
    """Both API servers as one: each GET answers a collection and is recorded by its endpoint. The
    copies listed after the first list are ``later_copies`` when given (objects synced meanwhile)."""

    def __init__(
        self,
        sources: list[dict[str, Any]],
        copies: list[dict[str, Any]],
        later_copies: list[dict[str, Any]] | None = None,
    ) -> None:
        self.items = {"kcp": sources, "service": copies}
        self.later_copies = later_copies
        self.calls: list[str] = []

    def api(self, endpoint: str, cluster: str) -> Any:
        lists = self

        class Api:
            def get(self, path: str, **query: str) -> dict[str, Any]:
                lists.calls.append(endpoint)
                assert path == SOURCE_PATH, path
                items = lists.items[endpoint]
                if (
                    endpoint == "service"
                    and lists.later_copies is not None
                    and lists.calls.count(endpoint) > 1
                ):
                    items = lists.later_copies
                return {"items": items, "metadata": {}}

            get_metadata = get  # a server may send whole objects for a metadata list

        return Api()

    def everywhere(self, endpoint: str) -> list[Any]:
        return [self.api(endpoint, "")]


def names(keys: set[ObjectKey]) -> set[str]:
    return {key.name for key in keys}


def test_a_missing_copy_whose_key_the_queue_holds_is_left_to_that_run() -> None:
    """A key pending or leased (a burst being synced) is not run again; a key the queue lost (a Redis
    wipe) or never had is enqueued."""
    lists = Lists([source("queued"), source("lost"), source("synced")], [copy_of("synced")])
    asked: list[set[str]] = []

    def held(keys: set[ObjectKey]) -> set[ObjectKey]:
        asked.append(names(keys))
        return {key for key in keys if key.name == "queued"}

    assert names(keys_needing_work(rule(), lists, held=held)) == {"lost"}  # type: ignore[arg-type]
    assert asked == [{"queued", "lost"}]  # only the missing copies are looked up
    assert names(keys_needing_work(rule(), lists)) == {"queued", "lost"}  # type: ignore[arg-type]


def test_a_copy_made_while_the_lists_ran_is_found_by_a_second_list_of_the_copies() -> None:
    """Keys done between the first list and the queue lookup are held no longer; the copies listed
    again show them synced. Without unheld keys there is no second list."""
    lists = Lists(
        [source("synced-meanwhile"), source("lost")], [], later_copies=[copy_of("synced-meanwhile")]
    )
    assert names(keys_needing_work(rule(), lists)) == {"lost"}  # type: ignore[arg-type]
    assert lists.calls == ["service", "kcp", "service"]
    lists.calls.clear()

    def everything(keys: set[ObjectKey]) -> set[ObjectKey]:
        return keys  # the queue holds every key

    assert keys_needing_work(rule(), lists, held=everything) == set()  # type: ignore[arg-type]
    assert lists.calls == ["service", "kcp"]


def test_copies_are_listed_before_sources_so_a_copy_synced_in_between_is_no_orphan() -> None:
    """A copy whose source is not listed after it is a possible orphan; a new object, however fresh,
    never hides one."""
    lists = Lists([source("kept"), source("going", deletionTimestamp="2026-11-27T09:00:00Z")], [])
    lists.items["service"] = [copy_of("kept"), copy_of("going"), copy_of("gone")]
    assert names(keys_needing_work(rule(), lists)) == {"going", "gone"}  # type: ignore[arg-type]
    assert lists.calls == ["service", "kcp"]


def test_a_resync_of_in_sync_objects_costs_its_two_lists_and_nothing_more() -> None:
    """Issue 16: no request beyond the lists when every object has its copy (nothing is enqueued, so
    no worker reads or writes either)."""
    lists = Lists([source("a"), source("b")], [copy_of("a"), copy_of("b")])
    assert keys_needing_work(rule(), lists) == set()  # type: ignore[arg-type]
    assert lists.calls == ["service", "kcp"]


def test_objects_a_rule_does_not_select_cost_nothing_and_those_it_stopped_selecting_are_released() -> None:
    """The server applies only the label selector: names, namespaces and fields are applied here, so a
    narrowed rule finds the objects it selected before (they hold its finalizer) and no pass enqueues
    the objects it never selected."""
    narrowed = rule().model_copy(update={"selector": Selector(names=("kept",))})
    finalizer = narrowed.finalizer
    lists = Lists(
        [
            source("kept", finalizers=[finalizer]),
            source("dropped", finalizers=[finalizer]),
            source("never"),
            source("new"),
        ],
        [copy_of("kept"), copy_of("dropped")],
    )
    assert names(keys_needing_work(narrowed, lists)) == {"dropped"}
    widened = rule().model_copy(update={"selector": Selector(names=("kept", "dropped", "new"))})
    assert names(keys_needing_work(widened, lists)) == {"new"}
