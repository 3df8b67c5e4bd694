"""Capped exponential backoff with jitter."""

from __future__ import annotations

import random


class Backoff:
    """Delays ``initial * 2**n`` capped at ``cap``, each drawn from ``[d/2, d]``; reset on success."""

    def __init__(self, initial: float = 0.2, cap: float = 30.0) -> None:
        self.initial = initial
        self.cap = cap
        self._failures = 0

    def next(self) -> float:
        """The delay before the next attempt."""
        delay = min(self.cap, self.initial * 2 ** min(self._failures, 32))
        self._failures += 1
        return random.uniform(delay / 2, delay)

    def reset(self) -> None:
        """Start again from ``initial``."""
        self._failures = 0
