"""Per-endpoint request budget: a token bucket in Redis shared by every worker of an agent.

Each process leases tokens in batches (one script call per lease) and spends them locally, paced at the
bucket's rate, so a request costs no Redis round trip. The batch adapts to the process's own rate: it
doubles while a lease runs out within ``LEASE_SECONDS`` and shrinks to what was used when tokens go
unspent. Tokens left unspent ``LEASE_SECONDS`` after they became due expire: the next lease's script call
gives them back to the bucket (up to its burst), so the configured QPS holds across all processes — no
more, and not less because leases went unused — and a process never holds a large burst.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from redis import Redis

from syncflow.config import EndpointLimit, Settings
from syncflow.queue.layout import budget_key
from syncflow.queue.scripts import Scripts
from syncflow.util.deadline import DeadlineExceededError, remaining

LEASE_SECONDS = 0.25
"""How long leased tokens stay usable after they become due; a lease holds at most this long's worth of
the endpoint's rate."""


@dataclass
class _Lease:
    """Tokens leased at ``start``: token ``i`` of ``size`` is due ``max(0, last_due - (size-1-i)/qps)``
    seconds after it."""

    size: int = 0
    spent: int = 0
    start: float = 0.0
    last_due: float = 0.0

    def due(self, qps: float) -> float:
        """The monotonic time the next unspent token may be used."""
        return self.start + max(0.0, self.last_due - (self.size - 1 - self.spent) / qps)

    def usable(self, now: float) -> bool:
        """Whether a token is left that has not expired."""
        return self.spent < self.size and now <= self.start + self.last_due + LEASE_SECONDS


class RequestBudget:
    """Handlers call ``take(endpoint)`` before each API call; over budget it waits, never fails."""

    def __init__(self, redis: Redis, scripts: Scripts, settings: Settings) -> None:
        self._script = scripts.budget
        self._redis = redis
        self._settings = settings
        self._lock = threading.Lock()
        self._leases: dict[str, _Lease] = {}
        self._batch: dict[str, int] = {}
        self._limits: dict[str, EndpointLimit] = {}
        self.leases = 0
        """Script calls made so far (one per lease)."""

    def reserve(self, endpoint: str, count: int = 1, refund: int = 0) -> float:
        """Reserve ``count`` requests in the shared bucket, first giving back ``refund`` tokens an
        earlier reservation left unspent; returns the seconds to wait before the last of them may be
        sent (each earlier one is due ``1/qps`` before the next)."""
        limit = self._limit(endpoint)
        key = budget_key(self._settings.agent_name, endpoint)
        self.leases += 1
        wait_ms = self._script([key], [limit.qps, limit.burst, count, refund], client=self._redis)
        return int(wait_ms) / 1000

    def take(self, endpoint: str) -> None:
        """Wait until one request to ``endpoint`` fits the shared budget (never past the task's
        deadline: then it raises ``DeadlineExceededError``, a transient error)."""
        limit = self._limit(endpoint)
        with self._lock:
            lease = self._next_lease(endpoint, limit)
            due = lease.due(limit.qps)
            lease.spent += 1
        wait = due - time.monotonic()
        left = remaining()
        if left is not None and wait > left:
            raise DeadlineExceededError(f"the request budget of {endpoint} is spent past the task's deadline")
        if wait > 0:
            time.sleep(wait)

    def _limit(self, endpoint: str) -> EndpointLimit:
        """The endpoint's limit, built once (a model per request cost 3 % of a worker's CPU)."""
        limit = self._limits.get(endpoint)
        if limit is None:
            limit = self._limits[endpoint] = self._settings.endpoint_limit(endpoint)
        return limit

    def _next_lease(self, endpoint: str, limit: EndpointLimit) -> _Lease:
        """The endpoint's current lease, or a new one sized to this process's recent use."""
        now = time.monotonic()
        lease = self._leases.get(endpoint)
        if lease is not None and lease.usable(now):
            return lease
        size = self._batch.get(endpoint, 1)
        if lease is not None:  # grow while leases run out in time; shrink to what an expired one used
            most = max(1, int(limit.qps * LEASE_SECONDS))
            size = min(most, size * 2) if lease.spent == lease.size else max(1, lease.spent)
        self._batch[endpoint] = size
        unspent = lease.size - lease.spent if lease is not None else 0
        lease = _Lease(size=size, start=now)
        lease.last_due = self.reserve(endpoint, size, refund=unspent)
        self._leases[endpoint] = lease
        return lease
