"""Per-process queue objects, built lazily from the bound settings (safe across prefork's fork)."""

from __future__ import annotations

from functools import cached_property

from syncflow.config import Settings, load_settings
from syncflow.queue.redisclient import connect_redis
from syncflow.queue.renewer import LeaseRenewer
from syncflow.queue.service import Publisher, QueueService

REDIS_CONNECT_TIMEOUT = 5.0
"""Seconds to connect to Redis."""
REDIS_TIMEOUT = 10.0
"""Seconds one Redis command may take (our scripts take milliseconds; nothing here blocks)."""


class Runtime:
    """Settings, Redis client, queue service and lease renewer of this process."""

    def __init__(self, publisher: Publisher, settings: Settings | None = None) -> None:
        self._publisher = publisher
        self._settings = settings

    def bind(self, settings: Settings) -> None:
        """Use these settings from now on (drops objects built from earlier ones)."""
        self._settings = settings
        for name in ("settings", "service", "renewer"):
            self.__dict__.pop(name, None)

    @cached_property
    def settings(self) -> Settings:
        """The bound settings, or those of the environment and ``SYNCFLOW_CONFIG``."""
        return self._settings or load_settings()

    @cached_property
    def service(self) -> QueueService:
        """The queue service on the configured Redis."""
        redis = connect_redis(
            self.settings.redis_url,
            health_check_interval=30,
            socket_keepalive=True,
            socket_connect_timeout=REDIS_CONNECT_TIMEOUT,
            socket_timeout=REDIS_TIMEOUT,
        )
        return QueueService(redis, self.settings, self._publisher)

    @cached_property
    def renewer(self) -> LeaseRenewer:
        """Renews leases every third of the lease TTL."""
        return LeaseRenewer(self.settings.lease_ttl / 3)
