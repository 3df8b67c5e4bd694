"""A value computed at most once per few seconds, shared by concurrent callers: the overview's count
and its reads of the agent's processes, which every viewer's page polls every two seconds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

SECONDS = 5.0
"""How long a value is reused at least."""
SHARE = 10
"""A value that took long to compute is reused this many times as long, so computing it never takes
more than a tenth of the time, whatever the number of keys."""


class Cached(Generic[T]):
    """``compute()``'s value, computed again when older than its time to live."""

    def __init__(self, compute: Callable[[], T], ttl: float = SECONDS) -> None:
        self._compute = compute
        self._base = self._ttl = ttl
        self._lock = threading.Lock()
        self._value: tuple[float, T] | None = None

    def get(self) -> T:
        """The value, computed again if it is older than its time to live."""
        with self._lock:
            started = time.monotonic()
            if self._value is None or started - self._value[0] > self._ttl:
                value = self._compute()
                ended = time.monotonic()
                self._value = (ended, value)
                self._ttl = max(self._base, SHARE * (ended - started))
            return self._value[1]

    def forget(self) -> None:
        """Compute again on the next ``get`` (e.g. after a replay)."""
        with self._lock:
            self._value = None
