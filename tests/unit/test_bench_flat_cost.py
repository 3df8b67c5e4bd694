"""The flat-cost report of ``bench/e2e.py --batches``: which runs it compares, and how."""

from __future__ import annotations

from bench.e2e import flat_cost, flat_cost_by_round


def test_the_1st_5th_and_10th_runs_are_compared_as_lowest_over_highest() -> None:
    runs = [(300.0, 1.0, 3.0, 3.0)] * 10
    runs[4] = (240.0, 1.25, 3.0, 3.0)  # the 5th: 20 % slower, 25 % more service CPU
    runs[6] = (10.0, 9.0, 9.0, 9.0)  # the 7th is not one of the three compared

    lines = flat_cost(runs, 1_000)

    assert lines[0] == "  flat cost: 10 runs of 1000 objects one after another on this stack"
    assert lines[5].startswith("    run  5 (copies 4001-5000):  240.0 obj/s")
    assert lines[-1] == (
        "    runs #1, #5, #10, lowest/highest (within 15 %: >= 0.85):"
        " obj/s 0.800, service CPU 0.800, syncflow CPU 1.000, requests 1.000"
    )


def test_fewer_runs_compare_the_first_with_the_last() -> None:
    lines = flat_cost([(200.0, 1.0, 2.0, 3.0), (1.0, 9.0, 9.0, 9.0), (100.0, 2.0, 2.0, 3.0)], 500)

    assert lines[-1] == (
        "    runs #1, #3, lowest/highest (within 15 %: >= 0.85):"
        " obj/s 0.500, service CPU 0.500, syncflow CPU 1.000, requests 1.000"
    )


def test_a_slow_stretch_of_one_round_does_not_move_the_medians() -> None:
    def batches(slow: int) -> list[tuple[float, float, float, float]]:
        return [(150.0, 2.0, 6.0, 3.0) if k == slow else (300.0, 1.0, 3.0, 3.0) for k in range(1, 11)]

    rounds = [({2: {"batches": batches(slow)}}, {}, {}) for slow in (5, 10, 7)]

    summary = flat_cost_by_round(rounds, 1_000).splitlines()

    assert summary[:2] == ["flat cost, each figure the median over the rounds", "  2 worker process(es):"]
    assert summary[-1].endswith("obj/s 1.000, service CPU 1.000, syncflow CPU 1.000, requests 1.000")
    assert summary[-1].startswith("    runs #1, #5, #10, lowest/highest")
