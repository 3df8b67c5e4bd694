"""The scale-out figures of ``bench/e2e.py``: a run's middle 80 %, and each doubling by round."""

from __future__ import annotations

from typing import Any

import pytest

from bench.e2e import scaling_by_round
from bench.support import middle_rate


def test_the_middle_80_percent_leaves_out_a_slow_start_and_a_slow_tail() -> None:
    seen = {f"o{i}": 10.0 + 2.0 + i * 0.01 for i in range(101)}  # one copy every 10 ms ...
    seen["o0"], seen["o100"] = 10.5, 15.0  # ... but the first and last late

    rate, first, last = middle_rate(seen, 10.0)

    assert rate == pytest.approx(100.0)  # copies 10 .. 90: 80 copies in 0.8 s
    assert (first, last) == (pytest.approx(2.1), pytest.approx(2.9))


def test_copies_all_seen_at_once_have_no_middle_rate() -> None:
    assert middle_rate({"a": 1.0, "b": 1.0}, 0.0) == (0.0, 1.0, 1.0)


def _run(whole: float, middle: float) -> dict[str, Any]:
    return {"rate": whole, "middle": (middle, 0.0, 0.0)}


def test_each_doubling_is_shown_by_round_with_its_median() -> None:
    rounds: list[Any] = [
        ({4: _run(50, 52), 8: _run(90, 104)}, {}, {}),
        ({4: _run(50, 50), 8: _run(95, 100)}, {}, {}),
        ({4: _run(50, 50), 8: _run(100, 90)}, {}, {}),
    ]

    assert scaling_by_round(rounds).splitlines()[1] == (
        "  4 -> 8: x1.80 (x2.00), x1.90 (x2.00), x2.00 (x1.80); median x1.90 (x2.00)"
    )
