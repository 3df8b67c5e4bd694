"""Work deferred to the end of one read of a watch stream (``syncflow.kube.deferred``)."""

from __future__ import annotations

import pytest

from syncflow.kube import deferred


def test_outside_a_read_nothing_is_deferred() -> None:
    done: list[list[int]] = []
    assert deferred.defer(done.append, 1) is False
    assert done == []


def test_a_read_hands_each_function_its_items_in_order_once_flushed() -> None:
    adds: list[list[str]] = []
    saves: list[list[int]] = []
    with deferred.one_read() as read:
        assert deferred.defer(adds.append, "a") and deferred.defer(saves.append, 1)
        assert deferred.defer(adds.append, "b")
        assert adds == [] and saves == [], "nothing runs before the flush"
        read.flush()
        assert adds == [["a", "b"]] and saves == [[1]]
        read.flush()
        assert adds == [["a", "b"]], "a second flush has nothing left to do"
    assert deferred.defer(adds.append, "c") is False, "the read ends with its block"


class FlushError(Exception):
    pass


def test_a_failed_flush_propagates_and_drops_the_read() -> None:
    def refuse(items: list[int]) -> None:
        raise FlushError(items)

    with deferred.one_read() as read:
        deferred.defer(refuse, 1)
        with pytest.raises(FlushError):
            read.flush()
        read.flush()  # the failed work went with the failure: the watch reads those events again
