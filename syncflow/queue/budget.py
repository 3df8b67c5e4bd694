"""Per-endpoint request budget: a token bucket in Redis shared by every worker of an agent."""

from __future__ import annotations

import time

from redis import Redis

from syncflow.config import Settings
from syncflow.deadline import DeadlineExceededError, remaining
from syncflow.queue.layout import budget_key
from syncflow.queue.scripts import Scripts


class RequestBudget:
    """Handlers call ``take(endpoint)`` before each API call; over budget it waits, never fails."""

    def __init__(self, redis: Redis, scripts: Scripts, settings: Settings) -> None:
        self._script = scripts.budget
        self._redis = redis
        self._settings = settings

    def reserve(self, endpoint: str) -> float:
        """Reserve one request; returns the seconds to wait before sending it."""
        limit = self._settings.endpoint_limit(endpoint)
        key = budget_key(self._settings.agent_name, endpoint)
        return int(self._script([key], [limit.qps, limit.burst], client=self._redis)) / 1000

    def take(self, endpoint: str) -> None:
        """Wait until one request to ``endpoint`` fits the shared budget (never past the task's
        deadline: then it raises ``DeadlineExceededError``, a transient error)."""
        wait = self.reserve(endpoint)
        left = remaining()
        if left is not None and wait > left:
            raise DeadlineExceededError(f"the request budget of {endpoint} is spent past the task's deadline")
        if wait > 0:
            time.sleep(wait)
