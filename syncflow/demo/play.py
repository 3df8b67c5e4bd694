"""What every demo scenario gets from the runner, and the steps they share: waiting on what the sync does,
and playing a cluster's controller when the cluster has none (a devcluster without simulated controllers)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from syncflow.demo.progress import Progress
from syncflow.runtime.stack import Stack

T = TypeVar("T")

CONTROLLER_GRACE = 5.0
"""Seconds to let a cluster's own controller report before the demo plays it."""


@dataclass(frozen=True)
class DemoRun:
    """One run of a demo scenario: its processes, its progress lines, its Redis and agent name."""

    stack: Stack
    progress: Progress
    redis_url: str
    agent: str
    timeout: float
    once: bool
    metrics: Mapping[str, str]
    """Where each of the agent's processes serves ``/metrics`` (``host:port`` by role)."""

    def wait(self, predicate: Callable[[], T | None], what: str, logs: Sequence[str]) -> T:
        """Wait for ``predicate`` within the step timeout (failing with the tails of ``logs``)."""
        return self.stack.wait(predicate, self.timeout, what, logs)

    def observed_or_played(
        self, observe: Callable[[], T | None], play: Callable[[], object], what: str, logs: Sequence[str]
    ) -> tuple[T, bool]:
        """What a controller reports (``observe``); after a short grace, ``play`` its part and wait again.

        Returns the value and whether the demo played the controller."""
        deadline = time.monotonic() + CONTROLLER_GRACE
        while time.monotonic() < deadline:
            self.stack.check()
            value = observe()
            if value is not None and value is not False:
                return value, False
            time.sleep(0.1)
        play()
        return self.wait(observe, what, logs), True


DemoMode = Callable[[DemoRun], list[str]]
"""A demo mode: starts its clusters and agent in the run's stack, plays its steps (printing progress), and
returns the lines of hints to print while it serves."""
