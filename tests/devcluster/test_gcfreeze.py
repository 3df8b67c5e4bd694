"""The devcluster's full collections scan only what is newer than the last one
(``syncflow.devcluster.gcfreeze``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from syncflow.devcluster.gcfreeze import freeze_after_full_collections


@pytest.fixture
def freezing() -> Iterator[None]:
    gc.collect()
    stop = freeze_after_full_collections()
    yield
    stop()
    gc.unfreeze()


@pytest.mark.usefixtures("freezing")
def test_the_survivors_of_a_full_collection_are_frozen_and_a_dropped_one_is_still_freed() -> None:
    before = gc.get_freeze_count()
    stored = [{"metadata": {"name": f"o{i}"}, "data": {"k": "v"}} for i in range(1_000)]
    gc.collect(1)
    assert gc.get_freeze_count() == before, "a younger collection freezes nothing"
    gc.collect()
    frozen = gc.get_freeze_count()
    assert frozen >= before + 2 * len(stored)
    assert gc.get_count()[2] == 0 and not gc.get_objects(generation=2), "the next full one scans none of them"
    del stored[:]
    gc.collect()
    assert gc.get_freeze_count() < frozen, "a dropped frozen object is freed by refcounting"


def test_stopping_leaves_full_collections_as_they_were() -> None:
    stop = freeze_after_full_collections()
    stop()
    before = gc.get_freeze_count()
    gc.collect()
    assert gc.get_freeze_count() == before
