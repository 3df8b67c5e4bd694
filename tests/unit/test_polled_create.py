"""A polled rule's sync of an object its poll listed without a copy: it creates the copy without reading
the target first, and a copy or a foreign object that appeared since the listing is still found by the
create's 409 (the in-memory API servers of tests/support/fakeapi.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from syncflow.kube import snapshots
from syncflow.queue.errors import PermanentError
from syncflow.sync.reconciler import Sync, sync_object
from tests.support.fakeapi import FakeEndpoints
from tests.unit.test_reconciler_table import KEY, SOURCE, rule, thing

POLLED = rule(watch_source=False).model_copy(update={"finalizer": None})
"""A polled rule, as edge's upsync makes it: no finalizer on the objects it lists."""


def polled_run(ends: FakeEndpoints, *, uncopied: bool) -> Counter[str]:
    """One sync of KEY delivered with the source object as a poll listed it; the requests it made."""
    with snapshots.event_object("source", ends.source.get(SOURCE), uncopied=uncopied):
        encoded = snapshots.encoded_event()
    ends.source.calls.clear()
    ends.target.calls.clear()
    with snapshots.delivered(encoded):
        sync_object(Sync(POLLED, ends), KEY)  # type: ignore[arg-type]
    return ends.source.calls + ends.target.calls


@pytest.fixture
def ends() -> FakeEndpoints:
    made = FakeEndpoints()
    made.target.put("/api/v1/namespaces/team", {"metadata": {"name": "team"}})
    made.source.put(SOURCE, thing(1))
    return made


def test_listed_without_a_copy_costs_one_create(ends: FakeEndpoints) -> None:
    assert polled_run(ends, uncopied=True) == Counter({"POST": 1})
    assert ends.target.objects[SOURCE]["spec"] == {"size": 1}


def test_without_the_listing_the_copy_is_looked_up_first(ends: FakeEndpoints) -> None:
    assert polled_run(ends, uncopied=False) == Counter({"GET": 1, "POST": 1})


def test_a_copy_made_since_the_listing_is_recognised_by_the_409(ends: FakeEndpoints) -> None:
    polled_run(ends, uncopied=True)  # another run made the copy after the listing
    made = ends.target.objects[SOURCE]
    assert polled_run(ends, uncopied=True) == Counter({"POST": 1, "GET": 1}), "create, then read"
    assert ends.target.objects[SOURCE]["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]


def test_a_foreign_object_placed_since_the_listing_is_refused_and_left_alone(ends: FakeEndpoints) -> None:
    foreign = ends.target.put(SOURCE, thing(9))
    with pytest.raises(PermanentError):
        polled_run(ends, uncopied=True)
    assert ends.target.objects[SOURCE] == foreign


def test_the_mark_survives_the_queue_encoding_and_is_off_by_default() -> None:
    for mark in (True, False):
        with snapshots.event_object("source", thing(1), uncopied=mark):
            encoded = snapshots.encoded_event()
        with snapshots.delivered(encoded):
            delivered = snapshots.current()
        assert delivered is not None and delivered.uncopied is mark
    with snapshots.event_object("source", thing(1)):
        assert '"uncopied"' not in snapshots.encoded_event()
