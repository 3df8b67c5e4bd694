"""The figures every mode's benchmark returns (``measure``), and the one table or JSON of several modes."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import orjson

Load = tuple[float, float, float]
PER = 10_000
"""Memory figures are per this many synced objects."""


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
    base_rate: float
    """The baseline's objects/s."""
    requests: float | None = None
    """syncflow's API requests per object (both sides, minus the benchmark's own)."""
    base_requests: float | None = None
    sync: float | None = None
    """``sync`` reconciles per object."""
    status: float | None = None
    """``status`` reconciles per object."""
    p50_ms: float | None = None
    p99_ms: float | None = None
    rss_mb: float | None = None
    """RSS of the worker role's processes after the sync, summed."""
    rss_growth_mb: float | None = None
    """Growth of that RSS from before the run to after the sync, per 10,000 objects."""
    redis_mb: float | None = None
    """Growth of Redis ``used_memory`` over the run, per 10,000 objects."""
    load_before: Load | None = None
    load_after: Load | None = None

    @property
    def ratio(self) -> float:
        """syncflow's objects/s over the baseline's."""
        return self.rate / self.base_rate

    def as_json(self) -> dict[str, Any]:
        """The figures, the ratio included."""
        return {**dataclasses.asdict(self), "ratio": self.ratio}


class MemoryFigures(TypedDict):
    """``ModeFigures``' memory fields (``bench.support.Memory``)."""

    rss_mb: float
    rss_growth_mb: float
    redis_mb: float


def mode_figures(
    mode: str,
    work: str,
    baseline: str,
    synced: Mapping[str, Any],
    sides: Sequence[str],
    base: Mapping[str, Any],
    memory: MemoryFigures,
) -> ModeFigures:
    """The figures of a sync run (``synced``: ``rate``, ``sync``, ``status``, API requests per object of
    each of ``sides``, ``p50``/``p99`` where measured) and its baseline (``base``: ``rate``, ``calls``)."""
    return ModeFigures(
        mode=mode,
        work=work,
        baseline=baseline,
        rate=synced["rate"],
        base_rate=base["rate"],
        requests=sum(synced[side] for side in sides),
        base_requests=base["calls"],
        sync=synced["sync"],
        status=synced["status"],
        p50_ms=synced.get("p50"),
        p99_ms=synced.get("p99"),
        **memory,
    )


def loaded(figures: ModeFigures, before: Load) -> ModeFigures:
    """``figures`` with the load averages ``before`` and now."""
    return dataclasses.replace(figures, load_before=before, load_after=os.getloadavg())


def per_10k(grown: float, objects: int) -> float:
    """``grown`` (bytes) as MB per 10,000 objects."""
    return grown / 2**20 * PER / objects


def _n(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _load(load: Load | None) -> str:
    return "—" if load is None else " ".join(f"{x:.2f}" for x in load)


COLUMNS: tuple[tuple[str, Callable[[ModeFigures], str]], ...] = (
    ("mode", lambda f: f.mode),
    ("work", lambda f: f.work),
    ("syncflow obj/s", lambda f: _n(f.rate, 1)),
    ("baseline obj/s", lambda f: _n(f.base_rate, 1)),
    ("ratio", lambda f: _n(f.ratio, 3)),
    ("API req/obj syncflow", lambda f: _n(f.requests, 2)),
    ("API req/obj baseline", lambda f: _n(f.base_requests, 2)),
    ("sync/obj", lambda f: _n(f.sync, 2)),
    ("status/obj", lambda f: _n(f.status, 2)),
    ("p50 ms", lambda f: _n(f.p50_ms, 0)),
    ("p99 ms", lambda f: _n(f.p99_ms, 0)),
    ("worker RSS MB", lambda f: _n(f.rss_mb, 0)),
    (f"RSS growth MB/{PER // 1000}k obj", lambda f: _n(f.rss_growth_mb, 1)),
    (f"Redis MB/{PER // 1000}k obj", lambda f: _n(f.redis_mb, 1)),
    ("load before", lambda f: _load(f.load_before)),
    ("load after", lambda f: _load(f.load_after)),
)


def table(runs: Sequence[ModeFigures]) -> str:
    """A markdown table of ``runs``, one row per mode, then each mode's baseline."""
    rows = [[name for name, _ in COLUMNS], *([cell(f) for _, cell in COLUMNS] for f in runs)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join(
        [
            line(rows[0]),
            line(["-" * w for w in widths]),
            *(line(row) for row in rows[1:]),
            "",
            f"load: 1, 5 and 15 min averages on {os.cpu_count()} cores; —: not measured in that mode",
            *(f"baseline of {f.mode}: {f.baseline}" for f in runs),
        ]
    )


def as_json(runs: Sequence[ModeFigures]) -> str:
    """``runs`` as a JSON array of objects (a missing figure is null)."""
    return orjson.dumps([f.as_json() for f in runs], option=orjson.OPT_INDENT_2).decode()
