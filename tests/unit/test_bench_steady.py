"""The steady phase's arithmetic (``bench.steady``) and the scale-out's (``bench.figures``): pacing, the
burst's bound, latency percentiles, a status change's way upstream, doublings. No clock is read."""

from __future__ import annotations

import pytest

from bench.figures import ModeFigures, doublings, percentile, scale_table
from bench.steady import (
    StatusLog,
    last_copy_bound,
    latency_figures,
    pace_achieved,
    returned,
    schedule,
    status_lags,
    steady_rate,
)


def test_creates_are_due_one_every_interval_from_the_start() -> None:
    assert schedule(4, 50.0) == [0.0, 0.02, 0.04, 0.06]


def test_without_a_rate_every_create_is_due_at_once() -> None:
    assert schedule(3, 0) == [0.0, 0.0, 0.0]


def test_the_steady_phase_runs_at_half_the_burst() -> None:
    assert steady_rate(120.0) == 60.0


def test_the_pace_of_creates_spread_as_scheduled_is_the_rate() -> None:
    created = {f"o{i}": 10.0 + at for i, at in enumerate(schedule(11, 5.0))}

    assert pace_achieved(created) == pytest.approx(5.0)
    assert pace_achieved({"a": 1.0}) == 0.0


def test_the_last_copy_may_land_a_second_after_the_objects_at_the_burst_pace() -> None:
    assert last_copy_bound(1_000, 250.0) == 5.0
    assert last_copy_bound(1_000, 0.0) is None  # every copy seen at once: no pace to bound by


def test_latency_is_create_to_copy_in_ms_over_the_objects_seen() -> None:
    created = {f"o{i}": float(i) for i in range(100)}
    seen = {f"o{i}": i + (0.5 if i >= 98 else 0.1) for i in range(100)}

    figures = latency_figures(created, seen)

    assert figures["p50"] == pytest.approx(100.0)
    assert figures["p99"] == pytest.approx(500.0)  # the 99th of 100, nearest rank: the second slowest


def test_percentile_picks_the_nearest_rank() -> None:
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 99) == 4.0


def _log(*changes: tuple[str, float, dict[str, int]]) -> StatusLog:
    log = StatusLog()
    for name, at, status in changes:
        log.record(name, status, at)
    return log


def test_a_status_log_records_changes_only_and_no_empty_status() -> None:
    log = _log(("a", 1.0, {}), ("a", 2.0, {"ready": 0}), ("a", 3.0, {"ready": 0}), ("a", 4.0, {"ready": 1}))

    assert [at for at, _ in log.changes["a"]] == [2.0, 4.0]


def test_key_order_does_not_make_a_status_differ() -> None:
    log = StatusLog()
    log.record("a", {"x": 1, "y": 2}, 1.0)
    log.record("a", {"y": 2, "x": 1}, 2.0)

    assert len(log.changes["a"]) == 1


def test_a_status_change_lags_until_upstream_shows_it() -> None:
    down = _log(("a", 1.0, {"ready": 0}), ("a", 2.0, {"ready": 1}), ("b", 1.5, {"ready": 1}))
    up = _log(("a", 1.2, {"ready": 0}), ("a", 2.3, {"ready": 1}), ("b", 1.9, {"ready": 1}))

    lags, missing = status_lags(down, up)

    assert sorted(lags) == [pytest.approx(0.2), pytest.approx(0.3), pytest.approx(0.4)]
    assert missing == 0


def test_a_change_superseded_before_it_was_returned_lags_until_the_later_one_shows() -> None:
    down = _log(("a", 1.0, {"ready": 0}), ("a", 1.1, {"ready": 1}))
    up = _log(("a", 1.5, {"ready": 1}))

    lags, missing = status_lags(down, up)

    assert lags == [pytest.approx(0.5), pytest.approx(0.4)]
    assert missing == 0


def test_an_upstream_status_from_before_the_change_does_not_count_and_a_never_shown_one_is_missing() -> None:
    down = _log(("a", 2.0, {"ready": 1}), ("a", 3.0, {"ready": 0}), ("a", 4.0, {"ready": 1}))
    # ready 1 at 1.0 is before the change at 2.0: it does not count for it
    up = _log(("a", 1.0, {"ready": 1}), ("a", 1.5, {"ready": 0}), ("a", 2.5, {"ready": 1}))

    lags, missing = status_lags(down, up)

    assert lags == [pytest.approx(0.5)]  # the change to ready 0 and back, after 2.5: never shown
    assert missing == 2


def test_statuses_are_returned_once_upstream_shows_each_objects_latest() -> None:
    down = _log(("a", 1.0, {"ready": 0}), ("a", 2.0, {"ready": 1}), ("b", 1.0, {"ready": 1}))

    assert not returned(down, _log(("a", 1.5, {"ready": 0}), ("b", 1.5, {"ready": 1})), ["a", "b"])
    assert returned(down, _log(("a", 2.5, {"ready": 1}), ("b", 1.5, {"ready": 1})), ["a", "b"])
    assert not returned(down, _log(("a", 2.5, {"ready": 1}), ("b", 1.5, {"ready": 1})), ["a", "b", "c"])


def test_each_doubling_of_workers_gives_its_ratio_of_objects_per_second() -> None:
    assert doublings({4: 50.0, 1: 15.0, 2: 28.5}) == [
        (1, 2, pytest.approx(1.9)),
        (2, 4, pytest.approx(50.0 / 28.5)),
    ]


def test_the_scale_out_table_shows_each_count_and_the_doublings() -> None:
    def run(workers: int, rate: float) -> ModeFigures:
        return ModeFigures("clusters", f"{workers}", "", rate, None, middle_rate=rate + 2, requests=3.0)

    text = scale_table({"clusters": {1: run(1, 10.0), 2: run(2, 19.0), 4: run(4, 36.1)}}, "20ms")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()[2:5]]

    assert [row[:6] for row in rows] == [
        ["clusters", "1", "10.0", "", "12.0", ""],
        ["clusters", "2", "19.0", "x1.90", "21.0", "x1.75"],
        ["clusters", "4", "36.1", "x1.90", "38.1", "x1.81"],
    ]
    assert "clusters: 1 -> 2 x1.90, 2 -> 4 x1.90" in text
