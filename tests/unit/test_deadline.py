"""A task's deadline cuts the timeouts of its API requests."""

from __future__ import annotations

import pytest

from syncflow.util.deadline import DeadlineExceededError, deadline, remaining, request_timeout


def test_without_a_deadline_timeouts_are_unchanged() -> None:
    assert remaining() is None
    assert request_timeout((5.0, 30.0)) == (5.0, 30.0)


def test_timeouts_are_cut_to_the_time_left() -> None:
    with deadline(2.0):
        connect, read = request_timeout((5.0, 30.0))
        assert 1.0 < connect <= 2.0 and connect == pytest.approx(read, abs=0.01)
        assert request_timeout((0.5, 1.0)) == (0.5, 1.0)
    assert remaining() is None


def test_an_earlier_outer_deadline_wins() -> None:
    with deadline(1.0), deadline(100.0):
        left = remaining()
        assert left is not None and left <= 1.0


def test_no_time_left_raises_a_timeout() -> None:
    with deadline(-1.0), pytest.raises(DeadlineExceededError, match="ran out"):
        request_timeout((5.0, 30.0))
    assert issubclass(DeadlineExceededError, TimeoutError)
