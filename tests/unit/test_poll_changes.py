"""What one poll of a polled (upsync) rule hands on: objects without a copy, marked so, and objects whose
copy holds another version of them; an object the queue already holds, or whose copy a second list of
the copies finds (it was synced while the first lists ran), is left to the run that made it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest

from syncflow.kube import snapshots
from syncflow.queue.keys import ObjectKey
from syncflow.sync.desired import remote_labels
from syncflow.sync.metadata import REMOTE_NAME_ANNOTATION, REMOTE_NAMESPACE_ANNOTATION
from syncflow.sync.reconciler import SOURCE_VERSION_ANNOTATION
from syncflow.sync.resync import poll_changes
from syncflow.sync.rule import IdentityPlacement, Resource, Selector, SelectorTerm, Side, SyncRule

THINGS = Resource(group="example.com", version="v1", kind="Thing", plural="things", namespaced=True)
RULE = SyncRule(
    name="up",
    agent="poll",
    source=Side(endpoint="edge", resource=THINGS, cluster="edge1"),
    target=Side(endpoint="mailbox", resource=THINGS),
    placement=IdentityPlacement(),
    finalizer=None,
    watch_source=False,
)


def thing(name: str, version: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": version}}


def copy_of(name: str, made_from: str) -> dict[str, Any]:
    meta = {
        "labels": remote_labels("edge1", "ns", name, "poll"),
        "annotations": {
            SOURCE_VERSION_ANNOTATION: made_from,
            REMOTE_NAMESPACE_ANNOTATION: "ns",
            REMOTE_NAME_ANNOTATION: name,
        },
    }
    return {"metadata": {"name": name, "namespace": "ns", **meta}}


@dataclass
class Lists:
    """An endpoint that answers collection lists only: the sources, or the copies (each copy list may
    find more: ``later`` copies appear from the second list on)."""

    items: list[dict[str, Any]]
    later: list[dict[str, Any]] = field(default_factory=list)
    lists: int = 0
    selectors: list[str] = field(default_factory=list)
    metadata_lists: int = 0

    def get(self, path: str, **query: str) -> dict[str, Any]:
        self.lists += 1
        self.selectors.append(query.get("labelSelector", ""))
        return {"items": self.items + (self.later if self.lists > 1 else []), "metadata": {}}

    def get_metadata(self, path: str, **query: str) -> dict[str, Any]:
        self.metadata_lists += 1
        return self.get(path, **query)


@dataclass
class Ends:
    source: Lists
    target: Lists

    def api(self, endpoint: str, cluster: str) -> Lists:
        return self.source if endpoint == "edge" else self.target

    def everywhere(self, endpoint: str) -> list[Lists]:
        return [self.api(endpoint, "")]


def key(name: str) -> ObjectKey:
    return ObjectKey("sync", "up", "edge1", "ns", name)


def poll(ends: Ends, held: Callable[[set[ObjectKey]], set[ObjectKey]] = lambda keys: set()) -> Any:
    return poll_changes(RULE, ends, held)  # type: ignore[arg-type]


def test_new_and_changed_objects_are_handed_on_and_gone_ones_named() -> None:
    sources = [thing("new", "5"), thing("changed", "7"), thing("same", "3")]
    copies = [copy_of("changed", "6"), copy_of("same", "3"), copy_of("orphan", "1")]
    changes = poll(Ends(Lists(sources), Lists(copies)))
    assert set(changes.seen) == {key("new"), key("changed")}
    assert orjson.loads(changes.seen[key("new")]) == thing("new", "5"), "as listed: no GET needed"
    assert changes.uncopied == {key("new")}, "only the one listed without a copy is created without a look"
    assert changes.gone == {key("orphan")}


def test_the_copies_are_listed_as_metadata_and_the_sources_whole() -> None:
    """A poll reads only the copies' metadata (which version each was made from), and hands on the
    changed sources as listed, so only the copies' list can leave their content out."""
    source, target = Lists([thing("new", "5")]), Lists([copy_of("same", "3")])
    poll(Ends(source, target))
    assert target.metadata_lists == target.lists == 2, "both lists of the copies"
    assert source.metadata_lists == 0 and source.lists == 1


def test_an_object_synced_while_the_poll_listed_is_left_alone() -> None:
    target = Lists([], later=[copy_of("raced", "5")])
    changes = poll(Ends(Lists([thing("raced", "5"), thing("new", "6")]), target))
    assert set(changes.seen) == {key("new")} and changes.uncopied == {key("new")}
    assert target.lists == 2, "the copies are listed a second time"


def test_an_object_the_queue_holds_is_left_to_that_run() -> None:
    target = Lists([])
    changes = poll(Ends(Lists([thing("queued", "5")]), target), held=lambda keys: keys)
    assert changes.seen == {} and changes.uncopied == set()
    assert target.lists == 1, "no second list when the queue holds them all"


@pytest.mark.parametrize(
    ("own", "terms", "sent"),
    [
        ("", ("app=web",), "app=web"),
        ("tier=edge", ("app=web",), "tier=edge,app=web"),
        ("tier=edge", ("app=web", "app in (db, cache)"), "tier=edge"),
        ("", ("app=web", "app=db"), ""),
        ("", (), ""),
    ],
)
def test_the_source_list_asks_the_server_for_every_label_all_selected_objects_carry(
    own: str, terms: tuple[str, ...], sent: str
) -> None:
    """The rule's own labels and those of its only ``any_of`` term go to the server (a poll of an edge
    rule then reads its selected objects, not every object of the type); the labels of several terms
    are checked after listing."""
    selector = Selector(labels=own, any_of=tuple(SelectorTerm(labels=labels) for labels in terms))
    source = Lists([])
    poll_changes(RULE.model_copy(update={"selector": selector}), Ends(source, Lists([])))  # type: ignore[arg-type]
    assert source.selectors == [sent]


def test_past_the_queues_snapshot_limit_objects_are_handed_on_by_key_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A poll holds no more objects than the queue keeps snapshots of: the rest are named by key and
    their syncs read them, so a first poll of a million objects holds a bounded number."""
    monkeypatch.setattr("syncflow.kube.snapshots.MAX_SNAPSHOTS", 2)
    sources = [thing(f"new-{i}", "5") for i in range(3)] + [thing("changed", "7"), thing("same", "3")]
    changes = poll(Ends(Lists(sources), Lists([copy_of("changed", "6"), copy_of("same", "3")])))
    assert len(changes.seen) == 2
    assert set(changes.seen) | changes.unseen == {key("new-0"), key("new-1"), key("new-2"), key("changed")}
    assert not set(changes.seen) & changes.unseen
    assert changes.uncopied == {key("new-0"), key("new-1"), key("new-2")}


def test_an_object_too_large_for_a_snapshot_is_handed_on_by_key_only() -> None:
    """The poll holds no object the queue would not keep: its sync reads it."""
    big = thing("big", "5") | {"data": {"blob": "x" * snapshots.MAX_SNAPSHOT_BYTES}}
    changes = poll(Ends(Lists([big, thing("small", "5")]), Lists([])))
    assert set(changes.seen) == {key("small")} and changes.unseen == {key("big")}
    assert changes.uncopied == {key("big"), key("small")}
