"""The unified bench's table and JSON (``python -m bench``): the figures given, "—" or null where missing."""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import replace

import orjson

from bench.figures import ModeFigures, as_json, per_10k, rounds_json, rounds_table, spread, table
from bench.support import (
    CpuReading,
    HostReading,
    cpu_ms,
    host_cpu,
    load_average,
    machine_cpu,
    most_overtaken,
    sampled_at,
    steal_share,
    sync_figures,
)

PUBLISH = ModeFigures(
    mode="publish",
    work="100 objects",
    baseline="the writes, directly",
    rate=50.0,
    base_rate=200.0,
    base_rate_same=100.0,
    same_clients=2,
    cpu_ms=2.5,
    base_cpu_ms_same=1.0,
    cpu_parts={"syncflow": 1.25, "redis": 0.25, "rest": 1.0},
    requests=4.256,
    base_requests=5.0,
    sync=1.0,
    status=0.5,
    p50_ms=120.4,
    p99_ms=900.6,
    last_copy_s=2.04,
    last_copy_bound_s=3.01,
    overtaken=12,
    steady_rate=25.0,
    steady_p50_ms=80.4,
    steady_p99_ms=410.6,
    status_p50_ms=150.2,
    rss_mb=310.2,
    rss_growth_mb=12.34,
    rss_late_mb=0.46,
    redis_mb=3.21,
    load_before=(1.0, 2.0, 3.0),
    load_after=(4.0, 5.0, 6.0),
    steal_pct=12.34,
)
EDGE = ModeFigures(mode="edge", work="initial upsync of 100", baseline="direct writes", rate=30, base_rate=60)
POLLED = replace(EDGE, poll_ms=60.4, bare_poll_ms=50.2)


def test_a_row_per_mode_with_its_figures_and_a_dash_where_one_is_missing() -> None:
    lines = table([PUBLISH, EDGE]).splitlines()

    header, rule, publish, edge = ([c.strip() for c in line.strip("|").split("|")] for line in lines[:4])
    assert header[:7] == [
        "mode",
        "work",
        "syncflow obj/s",
        "baseline obj/s",
        "ratio",
        "baseline obj/s (2 clients)",
        "ratio (2 clients)",
    ]
    assert set("".join(rule)) == {"-"}
    assert publish == [
        "publish",
        "100 objects",
        "50.0",
        "200.0",
        "0.250",
        "100.0",
        "0.500",
        "2.50",
        "1.25 / 0.25 / 1.00",
        "1.00",
        "0.400",
        "4.26",
        "5.00",
        "1.00",
        "0.50",
        "120",
        "901",
        "2.0 <= 3.0",
        "12",
        "25.0",
        "80",
        "411",
        "150",
        "—",
        "—",
        "—",
        "310",
        "12.3",
        "0.5",
        "3.2",
        "1.00 2.00 3.00",
        "4.00 5.00 6.00",
        "12.3",
    ]
    assert edge[:5] == ["edge", "initial upsync of 100", "30.0", "60.0", "0.500"]
    assert edge[5:] == ["—"] * 28
    assert lines[-2:] == ["baseline of publish: the writes, directly", "baseline of edge: direct writes"]
    assert (
        "baseline obj/s, ratio: the mode's baseline with 8 clients; baseline obj/s (2 clients)" in lines[-4]
    )
    assert (
        lines[-3].startswith("CPU ms/obj: the machine's busy CPU per object")
        and "CPU ratio (2 clients)" in lines[-3]
        and "of which: syncflow's processes' share" in lines[-3]
    )


def test_edge_shows_its_steady_poll_beside_the_bare_list_and_their_ratio() -> None:
    [header, _, row] = table([POLLED]).splitlines()[:3]

    names = [c.strip() for c in header.strip("|").split("|")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[names.index("poll ms (bare)")] == "60 (50, x1.20)"
    assert orjson.loads(as_json([POLLED]))[0]["bare_poll_ms"] == 50.2


def test_the_baseline_at_equal_concurrency_is_named_by_its_clients_or_n_when_runs_differ() -> None:
    four = replace(EDGE, base_rate_same=40.0, same_clients=4)

    assert "| baseline obj/s (N clients) | ratio (N clients) |" in table([PUBLISH, four]).splitlines()[0]
    assert [c.strip() for c in table([four]).splitlines()[2].strip("|").split("|")][3:7] == [
        "60.0",
        "0.500",
        "40.0",
        "0.750",
    ]


def test_json_has_every_figure_the_ratio_and_null_where_one_is_missing() -> None:
    publish, edge = orjson.loads(as_json([PUBLISH, EDGE]))

    assert publish["ratio"] == 0.25
    assert (publish["base_rate_same"], publish["same_clients"], publish["ratio_same"]) == (100.0, 2, 0.5)
    assert (edge["base_rate_same"], edge["ratio_same"]) == (None, None)
    assert (publish["cpu_ms"], publish["base_cpu_ms_same"], publish["cpu_ratio_same"]) == (2.5, 1.0, 0.4)
    assert (edge["cpu_ms"], edge["cpu_ratio_same"], edge["cpu_parts"]) == (None, None, None)
    assert publish["cpu_parts"] == {"syncflow": 1.25, "redis": 0.25, "rest": 1.0}
    assert (publish["load_before"], publish["steal_pct"], edge["steal_pct"]) == ([1.0, 2.0, 3.0], 12.34, None)
    assert (publish["rss_growth_mb"], publish["rss_late_mb"]) == (12.34, 0.46)
    assert edge["p99_ms"] is None
    assert (publish["overtaken"], edge["overtaken"]) == (12, None)
    assert edge["redis_mb"] is None
    assert set(edge) == set(publish)
    assert (publish["last_copy_within"], edge["last_copy_within"]) == (True, None)
    assert publish["steady_p99_ms"] == 410.6


def test_a_last_copy_past_its_bound_shows_so() -> None:
    late = replace(PUBLISH, last_copy_s=3.5)

    assert late.last_copy_within is False
    assert "3.5 > 3.0" in [c.strip() for c in table([late]).splitlines()[2].split("|")]


def test_a_run_without_baseline_has_no_ratio() -> None:
    alone = replace(PUBLISH, base_rate=None, base_requests=None, base_rate_same=None, same_clients=None)

    assert alone.ratio is None and alone.ratio_same is None
    assert [c.strip() for c in table([alone]).splitlines()[2].strip("|").split("|")][3:7] == ["—"] * 4


def test_memory_is_scaled_to_10k_objects() -> None:
    assert per_10k(2**20, 100) == 100.0


def test_the_memory_at_a_moment_is_the_last_sample_taken_by_then() -> None:
    samples = [(0.0, 100), (0.5, 140), (1.0, 150)]

    assert [sampled_at(samples, moment) for moment in (0.4, 0.5, 0.9, 7.0)] == [100, 140, 140, 150]
    assert sampled_at(samples, -1.0) == 100


def test_a_run_with_statuses_to_return_lasts_until_the_last_one_is_back() -> None:
    created = {"a": 10.0, "b": 10.0}
    seen = {"a": 11.0, "b": 12.0}
    requests = {"kcp": Counter({"PATCH": 4})}
    spent = {"cpu_ms": 1.5, "cpu_parts": {"syncflow": 1.0, "redis": 0.1, "rest": 0.4}}
    copies_only = sync_figures(10.0, created, seen, 1.0, requests, Counter({"sync": 2}), Counter(), spent)
    assert (copies_only["rate"], copies_only["last_s"], copies_only["returned_s"]) == (1.0, 2.0, None)
    assert (copies_only["cpu_ms"], copies_only["cpu_parts"]) == (1.5, spent["cpu_parts"])
    returned = {"a": 13.0, "b": 14.0}
    both = sync_figures(10.0, created, seen, 1.0, requests, Counter({"sync": 2}), Counter(), spent, returned)
    assert (both["rate"], both["last_s"], both["returned_s"]) == (0.5, 2.0, 4.0)


def test_the_machines_busy_cpu_grows_with_work_and_counts_per_object() -> None:
    before = machine_cpu()
    deadline = time.monotonic() + 30
    while machine_cpu() <= before:  # this loop is the work: it keeps a core busy until a tick is counted
        assert time.monotonic() < deadline, "no busy CPU counted in 30 s of a busy loop"
    assert cpu_ms(machine_cpu() - 2.0, 1_000) >= 2.0  # 2 s busy since that reading: at least 2 ms each


def test_the_hosts_steal_is_its_share_of_the_cpu_time_the_machine_wanted() -> None:
    assert steal_share((10.0, 1.0), (16.0, 3.0)) == 25.0  # 2 s stolen of 6 s busy + 2 s stolen
    assert steal_share((10.0, 1.0), (10.0, 1.0)) == 0.0  # nothing wanted: nothing stolen
    busy, stolen = host_cpu()
    assert busy <= machine_cpu()  # the same count, steal left out
    assert 0.0 <= steal_share((busy, stolen)) <= 100.0


def test_a_runs_host_line_has_the_load_before_and_after_the_cores_and_the_steal() -> None:
    line = load_average(HostReading((1.0, 2.0, 3.0), host_cpu()))

    assert line.startswith("load average before: 1.00 2.00 3.00  after: ")
    assert re.search(r"\(\d+ cores\); host steal \d+\.\d %$", line)


def test_a_copy_is_overtaken_by_the_later_objects_whose_copies_landed_first() -> None:
    created = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}

    assert most_overtaken(created, {"a": 5.0, "b": 6.0, "c": 7.0, "d": 8.0}) == 0  # in creation order
    assert most_overtaken(created, {"a": 9.0, "b": 6.0, "c": 7.0, "d": 8.0}) == 3  # a waited for all
    assert most_overtaken(created, {"a": 5.0, "b": 7.0, "c": 6.0, "d": 8.0}) == 1  # c before b
    assert most_overtaken(created, {"a": 9.0, "c": 6.0}) == 1  # only objects with a copy count


def test_a_runs_cpu_per_object_splits_into_syncflows_processes_redis_and_the_rest() -> None:
    earlier = CpuReading(
        machine=100.0, groups=Counter({"worker": 30.0, "watch": 10.0, "kcp": 20.0}), redis=5.0
    )
    later = CpuReading(
        machine=103.0, groups=Counter({"worker": 31.0, "watch": 10.5, "kcp": 21.0}), redis=5.25
    )

    spent = later.since(earlier, 1_000)

    assert spent["cpu_ms"] == 3.0
    assert spent["cpu_parts"] == {"syncflow": 1.5, "redis": 0.25, "rest": 1.25}
    assert sum(spent["cpu_parts"].values()) == spent["cpu_ms"]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip("|").split("|")]


def test_rounds_sum_up_to_each_figures_median_and_range_per_mode() -> None:
    publishes = [
        replace(PUBLISH, rate=40.0),
        replace(PUBLISH, rate=70.0, last_copy_s=3.5),
        replace(PUBLISH, rate=50.0, load_before=(0.5, 1.0, 1.0)),
    ]
    lines = rounds_table([publishes[0], EDGE, publishes[1], POLLED, publishes[2], EDGE]).splitlines()

    header, publish, edge = _cells(lines[0]), _cells(lines[2]), _cells(lines[3])
    assert (publish[0], publish[1], edge[0], edge[1]) == ("publish", "3", "edge", "3")
    assert publish[header.index("syncflow obj/s")] == "50.0 (40.0 to 70.0)"
    assert publish[header.index("ratio (2 clients)")] == "0.500 (0.400 to 0.700)"
    assert publish[header.index("last copy within bound")] == "2 of 3"
    assert publish[header.index("load before (1 min)")] == "0.50 to 1.00"
    assert publish[header.index("host steal %")] == "12.3 (12.3 to 12.3)"
    assert publish[header.index("most overtaken")] == "12 (12 to 12)"
    assert edge[header.index("ratio (2 clients)")] == "—"
    assert edge[header.index("last copy within bound")] == "—"
    assert edge[header.index("poll / bare poll")] == "1.20 (1.20 to 1.20)"
    assert lines[-1].startswith("each figure: the median over the rounds (lowest to highest)")


def test_rounds_as_json_keep_every_rounds_figures_and_the_summary() -> None:
    rounds = [[replace(PUBLISH, rate=40.0), EDGE], [replace(PUBLISH, rate=60.0, last_copy_s=3.5), EDGE]]

    data = orjson.loads(rounds_json(rounds))

    assert [[f["mode"] for f in figures] for figures in data["rounds"]] == [["publish", "edge"]] * 2
    assert data["rounds"][1][0]["rate"] == 60.0
    publish, edge = data["summary"]["publish"], data["summary"]["edge"]
    assert publish["rate"] == {"median": 50.0, "min": 40.0, "max": 60.0}
    assert publish["ratio_same"] == {"median": 0.5, "min": 0.4, "max": 0.6}
    assert (publish["rounds"], publish["last_copy_within"], publish["last_copy_checked"]) == (2, 1, 2)
    assert (edge["ratio_same"], edge["last_copy_checked"]) == (None, 0)


def test_a_figure_no_round_measured_has_no_spread() -> None:
    assert spread([None, None]) is None
    assert spread([3.0, None, 1.0, 2.0]) == (2.0, 1.0, 3.0)
