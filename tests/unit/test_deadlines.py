"""Request deadlines: Go durations, the ``timeout`` parameter and the server's cap."""

from __future__ import annotations

import pytest

from syncflow.devcluster import deadlines
from syncflow.devcluster.errors import StatusError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30.0), ("1m30s", 90.0), ("1.5h", 5400.0), ("500ms", 0.5), ("0", 0.0), ("2us", 2e-6)],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert deadlines.parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "30", "s", "1x", "1s2", " 1s"])
def test_bad_go_durations(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        deadlines.parse_go_duration(text)


def test_timeout_parameter_is_capped_by_the_server() -> None:
    assert deadlines.request_deadline({}, 60.0) == 60.0
    assert deadlines.request_deadline({"timeout": "5s"}, 60.0) == 5.0
    assert deadlines.request_deadline({"timeout": "5m"}, 60.0) == 60.0
    with pytest.raises(StatusError) as bad:
        deadlines.request_deadline({"timeout": "soon"}, 60.0)
    assert bad.value.code == 400
    assert bad.value.message == 'invalid timeout specified in the request URL - time: invalid duration "soon"'


def test_only_watches_are_long_running() -> None:
    assert deadlines.is_long_running({"watch": "true"})
    assert not deadlines.is_long_running({"watch": "false", "timeoutSeconds": "5"})
