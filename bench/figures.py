"""The figures every mode's benchmark returns (``measure``), and the one table or JSON of several modes."""

from __future__ import annotations

import dataclasses
import os
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from operator import attrgetter
from typing import Any, TypedDict

import orjson

Load = tuple[float, float, float]
PER = 10_000
"""Memory figures are per this many synced objects."""
BASE_CLIENTS = 8
"""Concurrent clients of each mode's first baseline (its ``base_rate`` and ``ratio``)."""


@dataclass(frozen=True)
class RunOptions:
    """What ``python -m bench`` asks of one mode's ``measure``."""

    objects: int
    """Objects of the burst."""
    workers: int
    """Worker pool processes."""
    logs: str | None = None
    """Keep the process logs in new directories under this one (None: a scratch directory)."""
    steady: int = 0
    """Objects of the steady phase after the burst (0: none; edge: downstream changes timed)."""
    latency: str = "0"
    """``devcluster --latency`` of every API server, e.g. ``20ms``."""
    baseline: bool = True
    """Whether the mode's fair baseline runs too."""


@dataclass(frozen=True)
class ModeFigures:
    """One mode's run: syncflow and its fair baseline over the same work (None: not measured there)."""

    mode: str
    work: str
    """What was synced, e.g. ``1000 Widgets kcp -> service cluster, 2 worker processes``."""
    baseline: str
    """What the fair baseline does."""
    rate: float
    """syncflow's objects/s."""
    base_rate: float | None
    """The baseline's objects/s with ``BASE_CLIENTS`` clients (None: no baseline was run, as in the
    scale-out)."""
    base_rate_same: float | None = None
    """The same baseline's objects/s with ``same_clients`` clients, on a fresh stack of its own (None: not
    run)."""
    same_clients: int | None = None
    """That baseline's clients: as many as syncflow's pool processes in this run."""
    cpu_ms: float | None = None
    """The machine's busy CPU per object (ms) while syncflow synced the burst, until its work was done:
    every process's, the API servers', Redis's and the benchmark's clients and watches included; time
    stolen by the hypervisor left out (``steal_pct``)."""
    base_cpu_ms_same: float | None = None
    """The same for the baseline with ``same_clients`` clients (its API servers, clients and watches)."""
    cpu_parts: dict[str, float] | None = None
    """``cpu_ms`` in parts (ms per object): ``syncflow`` (its processes), ``redis`` (the Redis server)
    and ``rest`` (the API servers, the benchmark's clients and watches)."""
    requests: float | None = None
    """syncflow's API requests per object (both sides, minus the benchmark's own)."""
    base_requests: float | None = None
    sync: float | None = None
    """``sync`` reconciles per object."""
    status: float | None = None
    """``status`` reconciles per object."""
    p50_ms: float | None = None
    """The burst's create → copy latency (ms)."""
    p99_ms: float | None = None
    last_copy_s: float | None = None
    """Seconds from the burst's first create to its last copy."""
    last_copy_bound_s: float | None = None
    """What ``last_copy_s`` should be within: objects at the burst's middle-80 % pace, plus 1 s."""
    overtaken: int | None = None
    """The most copies of later-created objects that landed before one object's copy
    (``bench.support.most_overtaken``): a starved object shows as hundreds."""
    steady_rate: float | None = None
    """The steady phase's creates/s (half the burst's objects/s)."""
    steady_p50_ms: float | None = None
    """The steady phase's create → copy latency (ms)."""
    steady_p99_ms: float | None = None
    status_p50_ms: float | None = None
    """A status change downstream → the same status upstream (ms), in the steady phase."""
    lag_p50_ms: float | None = None
    """edge: a downstream change → the mailbox (ms), changes at random moments of the poll period."""
    lag_p99_ms: float | None = None
    poll_ms: float | None = None
    """edge: a poll task's time with nothing changing (ms), the mean of a few."""
    bare_poll_ms: float | None = None
    """edge: one paged list of each side (the mailbox's metadata only) by the baseline's client (ms)."""
    rss_mb: float | None = None
    """RSS of the worker role's processes after the sync, summed."""
    rss_growth_mb: float | None = None
    """Growth of that RSS from before the run to after the sync, per 10,000 objects."""
    rss_late_mb: float | None = None
    """Growth of that RSS from when half the run's copies had landed to after the sync, per 10,000 of
    the copies since: what more objects cost once the run is under way (flat: about 0)."""
    redis_mb: float | None = None
    """Growth of Redis ``used_memory`` over the run, per 10,000 objects."""
    middle_rate: float | None = None
    """syncflow's objects/s from the 10th to the 90th percentile copy (without ramp-up and tail)."""
    load_before: Load | None = None
    load_after: Load | None = None
    steal_pct: float | None = None
    """Percent of the CPU time the machine wanted over the mode's run that the hypervisor gave other
    guests (``bench.support.steal_share``): CPU ms/obj leaves it out, objects/s cannot."""

    @property
    def ratio(self) -> float | None:
        """syncflow's objects/s over the baseline's with ``BASE_CLIENTS`` clients."""
        return None if self.base_rate is None else self.rate / self.base_rate

    @property
    def ratio_same(self) -> float | None:
        """syncflow's objects/s over the baseline's with as many clients as it has pool processes: the
        fair comparison (docs/scaling.md, "The ratio and the fair baseline")."""
        return None if self.base_rate_same is None else self.rate / self.base_rate_same

    @property
    def cpu_ratio_same(self) -> float | None:
        """The fair baseline's CPU per object over syncflow's: 1.0 is as little CPU per object, whatever
        the host's speed at the time of each run."""
        if self.cpu_ms is None or self.base_cpu_ms_same is None:
            return None
        return self.base_cpu_ms_same / self.cpu_ms

    @property
    def poll_ratio(self) -> float | None:
        """edge: the steady poll's time over the bare paged lists' (target: at most 1.2)."""
        if self.poll_ms is None or not self.bare_poll_ms:
            return None
        return self.poll_ms / self.bare_poll_ms

    @property
    def last_copy_within(self) -> bool | None:
        """Whether the burst's last copy landed within its bound."""
        if self.last_copy_s is None or self.last_copy_bound_s is None:
            return None
        return self.last_copy_s <= self.last_copy_bound_s

    def as_json(self) -> dict[str, Any]:
        """The figures, the ratios and the bound's check included."""
        return {
            **dataclasses.asdict(self),
            "ratio": self.ratio,
            "ratio_same": self.ratio_same,
            "cpu_ratio_same": self.cpu_ratio_same,
            "poll_ratio": self.poll_ratio,
            "last_copy_within": self.last_copy_within,
        }


class MemoryFigures(TypedDict):
    """``ModeFigures``' memory fields (``bench.support.Memory``)."""

    rss_mb: float
    rss_growth_mb: float
    rss_late_mb: float
    redis_mb: float


def mode_figures(
    mode: str,
    work: str,
    baseline: str,
    synced: Mapping[str, Any],
    sides: Sequence[str],
    base: Mapping[str, Any] | None,
    memory: MemoryFigures,
    steady: Mapping[str, Any] | None = None,
    same: tuple[int, Mapping[str, Any]] | None = None,
) -> ModeFigures:
    """The figures of a sync run (``synced``: ``rate``, ``sync``, ``status``, API requests per object of
    each of ``sides``, ``p50``/``p99``/``last_s``/``bound_s`` where measured), its baseline with
    ``BASE_CLIENTS`` clients (``base``: ``rate``, ``calls``; None when not run), its steady phase
    (``steady``: ``rate``, ``p50``, ``p99``, ``status_p50``, ``lag_p50``, ``lag_p99``, ``poll_ms``,
    ``bare_poll_ms``, those measured) and the baseline with as many clients as syncflow's pool
    processes (``same``: those clients and that baseline's figures; None when not run)."""
    steady = steady or {}
    return ModeFigures(
        mode=mode,
        work=work,
        baseline=baseline,
        rate=synced["rate"],
        middle_rate=synced["middle"][0] if "middle" in synced else None,
        base_rate=None if base is None else base["rate"],
        base_rate_same=None if same is None else same[1]["rate"],
        same_clients=None if same is None else same[0],
        cpu_ms=synced.get("cpu_ms"),
        base_cpu_ms_same=None if same is None else same[1].get("cpu_ms"),
        cpu_parts=synced.get("cpu_parts"),
        requests=sum(synced[side] for side in sides),
        base_requests=None if base is None else base["calls"],
        sync=synced["sync"],
        status=synced["status"],
        p50_ms=synced.get("p50"),
        p99_ms=synced.get("p99"),
        last_copy_s=synced.get("last_s"),
        last_copy_bound_s=synced.get("bound_s"),
        overtaken=synced.get("overtaken"),
        steady_rate=steady.get("rate"),
        steady_p50_ms=steady.get("p50"),
        steady_p99_ms=steady.get("p99"),
        status_p50_ms=steady.get("status_p50"),
        lag_p50_ms=steady.get("lag_p50"),
        lag_p99_ms=steady.get("lag_p99"),
        poll_ms=steady.get("poll_ms"),
        bare_poll_ms=steady.get("bare_poll_ms"),
        **memory,
    )


def latency_note(latency: str) -> str:
    """What a run's ``work`` says of ``devcluster --latency`` (nothing when there is none)."""
    return "" if latency in ("", "0") else f", API latency {latency}"


def loaded(figures: ModeFigures, before: Load, steal_pct: float) -> ModeFigures:
    """``figures`` with the load averages ``before`` and now, and the share of CPU time stolen."""
    return dataclasses.replace(figures, load_before=before, load_after=os.getloadavg(), steal_pct=steal_pct)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def per_10k(grown: float, objects: int) -> float:
    """``grown`` (bytes) as MB per 10,000 objects."""
    return grown / 2**20 * PER / objects


CPU_PARTS = ("syncflow", "redis", "rest")
"""The parts of a run's CPU per object, in the order the table shows them."""


def _n(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _bound(f: ModeFigures) -> str:
    if f.last_copy_s is None or f.last_copy_bound_s is None:
        return _n(f.last_copy_s, 1)
    return f"{f.last_copy_s:.1f} {'<=' if f.last_copy_within else '>'} {f.last_copy_bound_s:.1f}"


def _parts(f: ModeFigures) -> str:
    if f.cpu_parts is None:
        return "—"
    return " / ".join(f"{f.cpu_parts[part]:.2f}" for part in CPU_PARTS)


def _poll(f: ModeFigures) -> str:
    if f.poll_ms is None or f.bare_poll_ms is None or f.poll_ratio is None:
        return "—"
    return f"{f.poll_ms:.0f} ({f.bare_poll_ms:.0f}, x{f.poll_ratio:.2f})"


def _load(load: Load | None) -> str:
    return "—" if load is None else " ".join(f"{x:.2f}" for x in load)


COLUMNS: tuple[tuple[str, Callable[[ModeFigures], str]], ...] = (
    ("mode", lambda f: f.mode),
    ("work", lambda f: f.work),
    ("syncflow obj/s", lambda f: _n(f.rate, 1)),
    ("baseline obj/s", lambda f: _n(f.base_rate, 1)),
    ("ratio", lambda f: _n(f.ratio, 3)),
    ("baseline obj/s ({same} clients)", lambda f: _n(f.base_rate_same, 1)),
    ("ratio ({same} clients)", lambda f: _n(f.ratio_same, 3)),
    ("CPU ms/obj syncflow", lambda f: _n(f.cpu_ms, 2)),
    ("of which syncflow / Redis / rest", _parts),
    ("CPU ms/obj baseline ({same} clients)", lambda f: _n(f.base_cpu_ms_same, 2)),
    ("CPU ratio ({same} clients)", lambda f: _n(f.cpu_ratio_same, 3)),
    ("API req/obj syncflow", lambda f: _n(f.requests, 2)),
    ("API req/obj baseline", lambda f: _n(f.base_requests, 2)),
    ("sync/obj", lambda f: _n(f.sync, 2)),
    ("status/obj", lambda f: _n(f.status, 2)),
    ("burst p50 ms", lambda f: _n(f.p50_ms, 0)),
    ("burst p99 ms", lambda f: _n(f.p99_ms, 0)),
    ("last copy s (bound)", _bound),
    ("most overtaken", lambda f: _n(f.overtaken, 0)),
    ("steady obj/s", lambda f: _n(f.steady_rate, 1)),
    ("steady p50 ms", lambda f: _n(f.steady_p50_ms, 0)),
    ("steady p99 ms", lambda f: _n(f.steady_p99_ms, 0)),
    ("status p50 ms", lambda f: _n(f.status_p50_ms, 0)),
    ("change lag p50 ms", lambda f: _n(f.lag_p50_ms, 0)),
    ("change lag p99 ms", lambda f: _n(f.lag_p99_ms, 0)),
    ("poll ms (bare)", _poll),
    ("worker RSS MB", lambda f: _n(f.rss_mb, 0)),
    (f"RSS growth MB/{PER // 1000}k obj", lambda f: _n(f.rss_growth_mb, 1)),
    (f"RSS growth 2nd half MB/{PER // 1000}k obj", lambda f: _n(f.rss_late_mb, 1)),
    (f"Redis MB/{PER // 1000}k obj", lambda f: _n(f.redis_mb, 1)),
    ("load before", lambda f: _load(f.load_before)),
    ("load after", lambda f: _load(f.load_after)),
    ("host steal %", lambda f: _n(f.steal_pct, 1)),
)


def _same_clients(runs: Sequence[ModeFigures]) -> str:
    """The clients of the runs' baseline at syncflow's concurrency, as a column names them (``N`` when
    the runs differ)."""
    counts = {f.same_clients for f in runs if f.same_clients is not None}
    return str(counts.pop()) if len(counts) == 1 else "N"


def table(runs: Sequence[ModeFigures]) -> str:
    """A markdown table of ``runs``, one row per mode, then what each column and each mode's baseline
    is. The columns of the baseline with as many clients as pool processes name that count (``N`` when
    the runs differ)."""
    same = _same_clients(runs)
    rows = [
        [name.format(same=same) for name, _ in COLUMNS],
        *([cell(f) for _, cell in COLUMNS] for f in runs),
    ]
    return "\n".join(
        [
            *markdown(rows),
            "",
            f"load: 1, 5 and 15 min averages on {os.cpu_count()} cores; —: not measured in that mode",
            "host steal %: the share of the CPU time the machine wanted over the mode's run that the"
            " hypervisor gave other guests (/proc/stat); obj/s and latencies include it, CPU ms/obj does"
            " not",
            "burst p50/p99: create -> copy on a raw watch of the target, objects created by 8 clients at"
            " once; last copy: seconds from the first create, within (<=) objects / the burst's middle-80 %"
            " pace + 1 s or not (>); most overtaken: the most copies of later-created objects that landed"
            " before one object's copy (0: in creation order; a starved object shows as hundreds)",
            "steady: objects created at half the burst's obj/s, create -> copy; status: a status change"
            " downstream -> the same status upstream (workload); change lag: a p-cluster change -> the"
            " mailbox, at random moments of the upsync period (edge)",
            "poll ms (bare): edge's poll task with nothing changing, beside one paged list of each side by"
            " a bare client (of the mailbox's copies, their metadata only, as the poll lists them), and"
            " their ratio",
            f"baseline obj/s, ratio: the mode's baseline with {BASE_CLIENTS} clients; baseline obj/s"
            f" ({same} clients), ratio ({same} clients): the same baseline with as many clients as syncflow"
            " has pool processes (--workers), on a fresh stack of its own: the fair comparison",
            "CPU ms/obj: the machine's busy CPU per object over the run, every process's (API servers,"
            " Redis, syncflow, this benchmark's clients and watches), until syncflow's work was done; CPU"
            f" ratio ({same} clients): that baseline's over syncflow's (1.0: as little CPU per object),"
            " which the host's speed at the time of each run moves far less than obj/s; of which: syncflow's"
            " processes' share of syncflow's CPU ms/obj, the Redis server's (as it reports itself), and the"
            " rest (the API servers, this benchmark's clients and watches)",
            *(f"baseline of {f.mode}: {f.baseline}" for f in runs),
        ]
    )


def markdown(rows: Sequence[Sequence[str]]) -> list[str]:
    """The lines of a markdown table: ``rows[0]`` is the header, every column padded to its widest."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return [line(rows[0]), line(["-" * w for w in widths]), *(line(row) for row in rows[1:])]


def as_json(runs: Sequence[ModeFigures]) -> str:
    """``runs`` as a JSON array of objects (a missing figure is null)."""
    return orjson.dumps([f.as_json() for f in runs], option=orjson.OPT_INDENT_2).decode()


Spread = tuple[float, float, float]
"""One figure over several rounds: its median, lowest and highest value."""

SUMMARY: tuple[tuple[str, str, int], ...] = (
    ("syncflow obj/s", "rate", 1),
    ("ratio ({same} clients)", "ratio_same", 3),
    ("CPU ms/obj syncflow", "cpu_ms", 2),
    ("CPU ratio ({same} clients)", "cpu_ratio_same", 3),
    ("API req/obj syncflow", "requests", 2),
    ("sync/obj", "sync", 2),
    ("status/obj", "status", 2),
    ("burst p99 ms", "p99_ms", 0),
    ("most overtaken", "overtaken", 0),
    ("steady p50 ms", "steady_p50_ms", 0),
    ("steady p99 ms", "steady_p99_ms", 0),
    ("status p50 ms", "status_p50_ms", 0),
    ("change lag p50 ms", "lag_p50_ms", 0),
    ("poll / bare poll", "poll_ratio", 2),
    (f"RSS growth 2nd half MB/{PER // 1000}k obj", "rss_late_mb", 1),
    ("host steal %", "steal_pct", 1),
)
"""The figures the summary of several rounds gives each mode: column, ``ModeFigures`` attribute (the
JSON's key), digits."""


def spread(values: Iterable[float | None]) -> Spread | None:
    """The median, lowest and highest of the measured ``values`` (None: none was measured)."""
    measured = [value for value in values if value is not None]
    if not measured:
        return None
    return statistics.median(measured), min(measured), max(measured)


def by_mode(runs: Iterable[ModeFigures]) -> dict[str, list[ModeFigures]]:
    """``runs`` grouped by mode, the modes in the order they first ran."""
    groups: dict[str, list[ModeFigures]] = {}
    for f in runs:
        groups.setdefault(f.mode, []).append(f)
    return groups


def _within(runs: Sequence[ModeFigures]) -> tuple[int, int]:
    """How many of ``runs`` had their last copy within its bound, of those that measured it."""
    checks = [f.last_copy_within for f in runs if f.last_copy_within is not None]
    return sum(checks), len(checks)


def _spreads(figures: Sequence[ModeFigures]) -> dict[str, Spread | None]:
    """Each ``SUMMARY`` figure's spread over ``figures``, by its attribute's name."""
    return {name: spread(attrgetter(name)(f) for f in figures) for _, name, _ in SUMMARY}


def _spread_cell(value: Spread | None, digits: int) -> str:
    if value is None:
        return "—"
    median, low, high = value
    return f"{median:.{digits}f} ({low:.{digits}f} to {high:.{digits}f})"


def rounds_table(runs: Sequence[ModeFigures]) -> str:
    """A markdown table that sums up several rounds of the same modes: per mode, each ``SUMMARY``
    figure's median over the rounds with its range, how often the last copy landed within its bound,
    and the 1-minute load averages the rounds started at."""
    same = _same_clients(runs)
    header = ["mode", "rounds", *(name.format(same=same) for name, _, _ in SUMMARY)]
    rows = [[*header, "last copy within bound", "load before (1 min)"]]
    for mode, figures in by_mode(runs).items():
        within, checked = _within(figures)
        loads = spread(f.load_before[0] if f.load_before else None for f in figures)
        spreads = _spreads(figures)
        rows.append(
            [
                mode,
                str(len(figures)),
                *(_spread_cell(spreads[name], digits) for _, name, digits in SUMMARY),
                f"{within} of {checked}" if checked else "—",
                "—" if loads is None else f"{loads[1]:.2f} to {loads[2]:.2f}",
            ]
        )
    return "\n".join(
        [
            *markdown(rows),
            "",
            "each figure: the median over the rounds (lowest to highest); the rounds ran the modes in turn,"
            " each on a fresh stack, so a stretch in which the host runs slow moves one round, not the"
            " median; the columns are those of the rounds' tables",
        ]
    )


def rounds_json(rounds: Sequence[Sequence[ModeFigures]]) -> str:
    """Several rounds as JSON: each round's figures (as ``as_json``), and per mode the median, lowest and
    highest of each ``SUMMARY`` figure (null: not measured) and how many rounds' last copies landed
    within their bound."""
    summary: dict[str, dict[str, Any]] = {}
    for mode, runs in by_mode(f for figures in rounds for f in figures).items():
        within, checked = _within(runs)
        summary[mode] = {"rounds": len(runs), "last_copy_within": within, "last_copy_checked": checked}
        for name, value in _spreads(runs).items():
            summary[mode][name] = (
                None if value is None else dict(zip(("median", "min", "max"), value, strict=True))
            )
    return orjson.dumps(
        {"rounds": [[f.as_json() for f in figures] for figures in rounds], "summary": summary},
        option=orjson.OPT_INDENT_2,
    ).decode()


def doublings(rates: Mapping[int, float]) -> list[tuple[int, int, float]]:
    """Each step of ``rates`` (objects/s by worker processes, in ascending order of processes) as
    (processes before, after, the ratio of their objects/s)."""
    counts = sorted(rates)
    return [(a, b, rates[b] / rates[a] if rates[a] else 0.0) for a, b in pairwise(counts)]


def scale_table(runs: Mapping[str, Mapping[int, ModeFigures]], latency: str) -> str:
    """A markdown table of each mode's runs by worker processes (each on a fresh stack), with the growth
    of objects/s (whole run; middle 80 %) over the count before, then each mode's doublings."""
    header = ["mode", "worker processes", "obj/s", "x prev", "middle 80 % obj/s", "x prev"]
    header += ["API req/obj", "sync/obj", "load before", "load after"]
    rows = [header]
    summary = []
    for mode, by_workers in runs.items():
        previous: ModeFigures | None = None
        for workers, f in sorted(by_workers.items()):
            rows.append(
                [
                    mode,
                    str(workers),
                    _n(f.rate, 1),
                    _growth(f.rate, previous.rate if previous else None),
                    _n(f.middle_rate, 1),
                    _growth(f.middle_rate, previous.middle_rate if previous else None),
                    _n(f.requests, 2),
                    _n(f.sync, 2),
                    _load(f.load_before),
                    _load(f.load_after),
                ]
            )
            previous = f
        steps = doublings({n: f.rate for n, f in by_workers.items()})
        summary.append(
            f"{mode}: "
            + ", ".join(f"{a} -> {b} x{ratio:.2f}" for a, b, ratio in steps)
            + " (whole run; the target: >= x1.8 per doubling)"
        )
    return "\n".join(
        [
            *markdown(rows),
            "",
            *summary,
            f"devcluster --latency {latency} on every API server; a fresh stack per count, no baseline;"
            f" load: 1, 5 and 15 min averages on {os.cpu_count()} cores",
        ]
    )


def _growth(now: float | None, before: float | None) -> str:
    return f"x{now / before:.2f}" if now is not None and before else ""


def scale_json(runs: Mapping[str, Mapping[int, ModeFigures]]) -> str:
    """The scale-out as JSON: per mode, each run's figures and the doublings of objects/s."""
    return orjson.dumps(
        {
            mode: {
                "runs": [f.as_json() for _, f in sorted(by_workers.items())],
                "doublings": [
                    {"from": a, "to": b, "ratio": ratio}
                    for a, b, ratio in doublings({n: f.rate for n, f in by_workers.items()})
                ],
            }
            for mode, by_workers in runs.items()
        },
        option=orjson.OPT_INDENT_2,
    ).decode()
