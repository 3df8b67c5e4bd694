"""What every mode's processes share: a per-process context (settings, Redis, the request budget, the
engine's task bodies) and the set-up of ``syncflow watch`` (the app bound, a term's sync manager, the
watch process)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import cached_property
from typing import Any, Self, TypeVar

from kubernetes.client import ApiClient
from redis import Redis

from syncflow import tasks
from syncflow.config import Settings
from syncflow.kube.bookmarks import RedisBookmarks
from syncflow.kube.clients import kcp_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.budget import RequestBudget
from syncflow.queue.layout import PERIODIC_QUEUE, agent_prefix
from syncflow.queue.leases import rules_with_leases
from syncflow.queue.reachability import Reachability
from syncflow.sync.endpoints import Endpoints
from syncflow.sync.keys import RELATED, SYNC
from syncflow.sync.orchestration import DesiredRules, SyncManager
from syncflow.sync.ownership import Reach
from syncflow.sync.process import WatcherFactory, WatchProcess
from syncflow.sync.registry import RuleRegistry
from syncflow.sync.watches import Enqueue
from syncflow.sync.worker import RuleWorker

C = TypeVar("C", bound="ModeContext")


class ModeContext:
    """A mode's clients and the engine's worker, built once per process from the settings."""

    def __init__(self, settings: Settings, redis: Redis, budget: RequestBudget | None = None) -> None:
        self.settings = settings
        self.redis = redis
        self.budget = budget

    def budget_hook(self, endpoint: str) -> Callable[[], None]:
        """Takes one request from ``endpoint``'s budget shared by every worker (waits when empty)."""
        budget = self.budget
        return lambda: budget.take(endpoint) if budget is not None else None

    def client(self, api: ApiClient, endpoint: str) -> JsonApi:
        """JSON requests to ``endpoint`` through ``api``: within its budget, its outcomes its connection
        status (metrics)."""
        return JsonApi(api, before_request=self.budget_hook(endpoint), endpoint=endpoint)

    @classmethod
    def watching(cls, settings: Settings) -> Self:
        """The context of ``syncflow watch``: the app bound to ``settings``, on its Redis (the watcher
        takes no request budget)."""
        tasks.bind(settings)
        return cls(settings, tasks.runtime.service.redis)

    def sync_manager(
        self, desired: DesiredRules, endpoints: Endpoints, enqueue: Enqueue
    ) -> tuple[SyncManager, RedisBookmarks]:
        """A watcher's sync manager on the agent's rule registry and watch bookmarks."""
        settings = self.settings
        bookmarks = RedisBookmarks(self.redis, agent_prefix(settings.agent_name) + "watch")
        manager = SyncManager(
            desired,
            RuleRegistry(self.redis, settings.agent_name),
            endpoints,
            enqueue,
            bookmarks,
            replay=tasks.runtime.service.replay_cause,
            redis=Reachability(settings.redis_url),
        )
        return manager, bookmarks

    def watch_process(self, lease: ApiClient, build: WatcherFactory) -> WatchProcess:
        """``syncflow watch``: the Lease taken through ``lease``, each term's watcher made by ``build``."""
        return WatchProcess(self.settings, lease, build, tasks.runtime.service)

    @cached_property
    def kcp(self) -> ApiClient:
        """The kcp client of the kcp kubeconfig."""
        return kcp_client(self.settings)

    @property
    def endpoints(self) -> Endpoints:
        """The mode's endpoints (built once by the subclass)."""
        raise NotImplementedError

    @cached_property
    def worker(self) -> RuleWorker:
        """The engine's task bodies with the mode's endpoints."""
        agent = self.settings.agent_name
        running = functools.partial(rules_with_leases, self.redis, agent, (SYNC, RELATED))
        reach = Reach(frozenset(self.settings.allow_system_namespaces))
        return RuleWorker(RuleRegistry(self.redis, agent), self.endpoints, running, reach)


_contexts: dict[tuple[type, int], ModeContext] = {}


def context_of(cls: type[C], settings: Settings, redis: Redis, budget: RequestBudget | None = None) -> C:
    """The ``cls`` context of these settings in this process (built on first use)."""
    context = _contexts.get((cls, id(settings)))
    if not isinstance(context, cls) or context.settings is not settings:
        context = cls(settings, redis, budget)
        _contexts[(cls, id(settings))] = context
    return context


def tick(name: str, period: float) -> dict[str, dict[str, Any]]:
    """A mode's beat entry ``<name>`` that runs the periodic task ``syncflow.<name>`` every ``period``
    seconds (a run not started within its period is dropped: the next one comes)."""
    return {
        name: {
            "task": f"syncflow.{name}",
            "schedule": period,
            "options": {"queue": PERIODIC_QUEUE, "expires": period},
        }
    }
