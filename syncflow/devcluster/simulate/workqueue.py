"""A deduplicating, bounded queue of reconcile keys, like client-go's workqueue without rate limits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable

from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.devcluster.simulate")


class WorkQueue:
    """Keys waiting to be reconciled; a key already waiting is not added twice."""

    def __init__(self, limit: int) -> None:
        self._pending: dict[Hashable, None] = {}
        self._limit = limit
        self._ready = asyncio.Event()
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, key: Hashable) -> None:
        """Queue ``key`` unless it is waiting already; drop it (and log) when the queue is full."""
        if key in self._pending:
            return
        if len(self._pending) >= self._limit:
            self.dropped += 1
            log_event(
                logger, "simulate.queue.full", level=logging.WARNING, key=repr(key), dropped=self.dropped
            )
            return
        self._pending[key] = None
        self._ready.set()

    async def get(self) -> Hashable:
        """The oldest waiting key (waits for one)."""
        while not self._pending:
            self._ready.clear()
            await self._ready.wait()
        key = next(iter(self._pending))
        del self._pending[key]
        return key
