"""What every mode's benchmark shares after its burst: the steady-rate phase (objects created at half the
burst's throughput, create → copy latency), a status change's way back upstream, and the burst's
no-starvation bound. The arithmetic is pure; the phase drives a mode's own watches and creates."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from bench.figures import percentile

if TYPE_CHECKING:
    import asyncio

    from bench.e2e import Stack

STEADY_SHARE = 0.5
"""The steady phase creates objects at this share of the burst's measured throughput."""
BOUND_SLACK = 1.0
"""Seconds the burst's last copy may land after ``objects / pace`` (issue 32: no object starves)."""


def schedule(count: int, rate: float) -> list[float]:
    """Seconds after the phase starts at which each of ``count`` creates is due: one every ``1 / rate``
    seconds from 0 (all at 0 when ``rate`` is 0: unpaced)."""
    return [i / rate if rate > 0 else 0.0 for i in range(count)]


def steady_rate(burst_rate: float, share: float = STEADY_SHARE) -> float:
    """The steady phase's creates per second: ``share`` of the burst's objects/s."""
    return burst_rate * share


def last_copy_bound(objects: int, pace: float, slack: float = BOUND_SLACK) -> float | None:
    """Seconds from a burst's first create within which its last copy should land: ``objects`` at the
    ``pace`` the burst drained them (its middle 80 %), plus ``slack``. None when there is no pace (all
    copies seen at once). The whole run's objects/s would make the check hold by definition (it is
    ``objects`` over the seconds to the last copy), so the pace is the middle's, without the tail."""
    return objects / pace + slack if pace > 0 else None


def latency_figures(created: Mapping[str, float], seen: Mapping[str, float]) -> dict[str, float]:
    """p50 and p99 in ms of create (``created`` times) → copy (``seen`` times), over the objects in both."""
    latencies = [(seen[name] - at) * 1000 for name, at in created.items() if name in seen]
    return {"p50": percentile(latencies, 50), "p99": percentile(latencies, 99)}


def pace_achieved(created: Mapping[str, float]) -> float:
    """Creates per second from the first create response to the last (0 with fewer than two)."""
    times = sorted(created.values())
    return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else 0.0


def digest(status: Any) -> bytes:
    """A status, comparable across the two sides (keys sorted)."""
    return orjson.dumps(status, option=orjson.OPT_SORT_KEYS)


class StatusLog:
    """When each object's status, as one watch shows it, became each value: ``changes[name]`` is a list of
    (seconds, digest), one entry per change. An object without status, or with an empty one, records
    nothing: a copy's create carries none, and only a controller's status is one to return."""

    def __init__(self) -> None:
        self.changes: dict[str, list[tuple[float, bytes]]] = {}

    def record(self, name: str, status: Any, at: float | None = None) -> None:
        """Record ``status`` of ``name`` seen at ``at`` (now when None), if it differs from the last."""
        if not status:
            return
        value = digest(status)
        changes = self.changes.setdefault(name, [])
        if not changes or changes[-1][1] != value:
            changes.append((time.perf_counter() if at is None else at, value))

    def latest(self, name: str) -> bytes | None:
        """The last status recorded of ``name``."""
        changes = self.changes.get(name)
        return changes[-1][1] if changes else None


def returned(downstream: StatusLog, upstream: StatusLog, names: Sequence[str]) -> bool:
    """Whether every one of ``names`` has a status downstream and upstream shows its latest."""
    return all(
        (latest := downstream.latest(name)) is not None and upstream.latest(name) == latest for name in names
    )


def status_lags(downstream: StatusLog, upstream: StatusLog) -> tuple[list[float], int]:
    """Seconds from each status change downstream until upstream shows it or a later status of the same
    object (a later change may supersede one before it is returned), and how many changes upstream
    never showed so."""
    lags: list[float] = []
    missing = 0
    for name, changes in downstream.changes.items():
        shown = upstream.changes.get(name, [])
        for k, (at, _) in enumerate(changes):
            later = {value for _, value in changes[k:]}
            arrival = next((t for t, value in shown if t >= at and value in later), None)
            if arrival is None:
                missing += 1
            else:
                lags.append(arrival - at)
    return lags, missing


async def copy_latency(
    stack: Stack,
    watch: Callable[[dict[str, float]], Awaitable[Sequence[asyncio.Task[None]]]],
    create: Callable[[float], Awaitable[dict[str, float]]],
    rate: float,
    timeout: float,
) -> dict[str, float]:
    """The steady phase of a mode: ``watch(seen)`` opens the mode's raw watches of the copies (returning
    once they are open, each task ending when it has seen its share), ``create(rate)`` creates the
    phase's objects paced at ``rate`` per second and returns their create times; then until every copy is
    seen (``timeout`` seconds). The pace achieved, p50 and p99 of create → copy in ms."""
    seen: dict[str, float] = {}
    watchers = await watch(seen)
    created = await create(rate)

    async def complete() -> bool | None:
        for watcher in watchers:
            if watcher.done():
                watcher.result()  # the watch's own error
        return True if all(w.done() for w in watchers) else None

    await stack.wait(complete, timeout, f"the steady phase's {len(created)} copies (seen {len(seen)})", 0.05)
    latencies = latency_figures(created, seen)
    return {"rate": pace_achieved(created), "p50": latencies["p50"], "p99": latencies["p99"]}
