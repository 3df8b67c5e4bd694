"""One log line when Redis (or the broker) goes away, one when it answers again.

Long-running processes (worker, beat, watch) keep retrying while Redis is gone. Instead of an error,
often with a traceback, per retry, they log ``redis.unreachable url=… error=…`` once and
``redis.reachable url=…`` at the first success after it (``broker.…`` for a RabbitMQ broker).
"""

from __future__ import annotations

import logging
import threading

import kombu.exceptions
import redis.exceptions

from syncflow.config import AMQP_SCHEMES
from syncflow.util.logs import log_event
from syncflow.util.neterrors import causes, display_url, network_reason

logger = logging.getLogger("syncflow.reachability")

REDIS_ERRORS: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)
"""Errors of syncflow's Redis client that mean Redis could not be reached."""
BROKER_ERRORS = (*REDIS_ERRORS, kombu.exceptions.OperationalError, OSError)
"""Errors of a process that talks to nothing but the broker (beat) that mean it could not be reached."""


class Reachability:
    """Whether the server at ``url`` answered last time; logs each change once (thread-safe).
    ``errors`` are the exceptions that mean it could not be reached (also under another error)."""

    def __init__(self, url: str, errors: tuple[type[BaseException], ...] = REDIS_ERRORS) -> None:
        self.url = display_url(url)
        self.subject = "broker" if url.partition("://")[0] in AMQP_SCHEMES else "redis"
        self.errors = errors
        self.down = False
        self._lock = threading.Lock()

    def failed(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the server could not be reached (then ``lost`` says so, once)."""
        if not any(isinstance(error, self.errors) for error in causes(exc)):
            return False
        self.lost(exc)
        return True

    def lost(self, exc: BaseException) -> None:
        """A connection or command failed: log ``<subject>.unreachable`` unless already down."""
        with self._lock:
            if self.down:
                return
            self.down = True
        log_event(
            logger,
            f"{self.subject}.unreachable",
            level=logging.WARNING,
            url=self.url,
            error=network_reason(exc),
            retrying=True,
        )

    def answered(self) -> None:
        """A connection or command succeeded: log ``<subject>.reachable`` if it was down."""
        with self._lock:
            if not self.down:
                return
            self.down = False
        log_event(logger, f"{self.subject}.reachable", url=self.url)
