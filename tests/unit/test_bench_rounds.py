"""``python -m bench --rounds N``: the modes run in turn, round after round, and bad counts are refused."""

from __future__ import annotations

import asyncio

import pytest

import bench.__main__ as bench_main
from bench.figures import ModeFigures, RunOptions


def test_the_modes_run_in_turn_round_after_round_and_each_round_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []
    reported: list[tuple[int, list[str]]] = []

    async def measured(mode: str, options: RunOptions) -> ModeFigures:
        ran.append(mode)
        return ModeFigures(
            mode=mode, work=f"{options.objects} objects", baseline="", rate=1.0, base_rate=None
        )

    monkeypatch.setattr(bench_main, "measured", measured)
    args = bench_main.parser().parse_args(["--mode", "all", "--rounds", "2", "--objects", "10"])

    rounds = asyncio.run(
        bench_main.run(args, lambda n, figures: reported.append((n, [f.mode for f in figures])))
    )

    modes = list(bench_main.MODES)
    assert ran == modes * 2
    assert reported == [(1, modes), (2, modes)]
    assert [[f.mode for f in figures] for figures in rounds] == [modes, modes]


@pytest.mark.parametrize(
    ("given", "said"), [("0", "must be at least 1, not 0"), ("two", "not a whole number")]
)
def test_a_count_of_rounds_that_is_no_whole_number_of_at_least_one_is_refused(
    given: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        bench_main.parser().parse_args(["--rounds", given])

    assert exited.value.code == 2
    assert said in capsys.readouterr().err


def test_rounds_are_refused_with_the_scale_out(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", ["python -m bench", "--scale-out", "--rounds", "2"])

    with pytest.raises(SystemExit) as exited:
        bench_main.main()

    assert exited.value.code == 2
    assert "--scale-out runs each worker count once" in capsys.readouterr().err


def test_the_default_is_one_round() -> None:
    assert bench_main.parser().parse_args([]).rounds == 1
    assert bench_main.parser().parse_args(["--rounds", "3"]).rounds == 3
