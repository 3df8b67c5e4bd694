"""The console's one entry point: every view and action, for one agent and one viewer scope. The web
app and ``syncflow status`` both call it; it holds no state but the overview's short cache."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from syncflow.console import history, overview, pages
from syncflow.console.cache import Cached
from syncflow.console.filters import Filters, Scope, key_part
from syncflow.console.latency import latency
from syncflow.console.models import Latency, Leader, ObjectDetail, ObjectPage, Overview, ReplayResult, Workers
from syncflow.console.sides import Sides
from syncflow.queue.keys import InvalidKeyError, ObjectKey
from syncflow.queue.service import QueueService
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.console")


@dataclass
class Agent:
    """How to read the agent's processes: its Lease, its workers, its metrics endpoints (each call
    ends within its own timeout)."""

    leader: Callable[[], Leader]
    workers: Callable[[], Workers]
    metrics_urls: Sequence[str] = ()

    def latency(self) -> Latency:
        return latency(self.metrics_urls)


def _unknown_leader() -> Leader:
    return Leader(lease="", error="not configured")


def _no_workers() -> Workers:
    return Workers(error="not configured")


@dataclass
class Reader:
    """Views and replays of one agent's keys that ``scope`` allows."""

    service: QueueService
    scope: Scope = field(default_factory=Scope)
    agent: Agent = field(default_factory=lambda: Agent(_unknown_leader, _no_workers))
    sides: Sides | None = None
    flower_url: str = ""

    def __post_init__(self) -> None:
        self.counter = Cached(functools.partial(overview.tally, self.service.redis, self.name, self.scope))
        self.processes = Cached(lambda: (self.agent.leader(), self.agent.workers(), self.agent.latency()))

    @property
    def name(self) -> str:
        """The agent's name."""
        return self.service.settings.agent_name

    def overview(self) -> Overview:
        """Counts per rule and workspace, queues, latency, leader and workers."""
        counted = self.counter.get()
        leader, workers, latency = self.processes.get()
        return Overview(
            agent=self.name,
            totals=counted.totals,
            rules=sorted(counted.rules.values(), key=lambda g: g.name),
            workspaces=sorted(counted.workspaces.values(), key=lambda g: g.name),
            queues=counted.queues,
            latency=latency,
            leader=leader,
            workers=workers,
            partial=counted.partial,
            scanned=counted.scanned,
            generated_at=overview.generated(),
        )

    def objects(self, filters: Filters, limit: int | None = None, token: str | None = None) -> ObjectPage:
        """One page of keys (raises ``pages.TokenError`` for a foreign token)."""
        return pages.list_page(self.service.redis, self.name, self.scope, filters, limit, token)

    def visible(self, key: str) -> ObjectKey | None:
        """The key, if it is one and the scope allows it."""
        try:
            parsed = ObjectKey.parse(key)
        except InvalidKeyError:
            return None
        return parsed if self.scope.allows(parsed.cluster) else None

    def object(self, key: str, *, sides: bool = True) -> ObjectDetail | None:
        """One key's detail; None when it is no key, out of scope, or no queue knows it."""
        parsed = self.visible(key)
        if parsed is None:
            return None
        found = history.find(self.service.redis, self.name, key)
        if found is None:
            return None
        detail = ObjectDetail(row=found.state.row(found.queue), history=found.history)
        if sides and self.sides is not None:
            source, copy, diff = self.sides.read(parsed)
            detail = detail.model_copy(update={"source": source, "copy_": copy, "diff": diff})
        return detail.model_copy(update={"flower_url": self._flower(detail)})

    def _flower(self, detail: ObjectDetail) -> str | None:
        if not self.flower_url:
            return None
        base = self.flower_url.rstrip("/")
        error = detail.history.last_error
        task = detail.history.lease_owner_task or (error.task if error else "")
        return f"{base}/task/{task}" if task else f"{base}/tasks"

    def replay(self, key: str) -> ReplayResult | None:
        """Replay one parked key; None when it is no key or out of scope."""
        if self.visible(key) is None:
            return None
        replayed = self.service.replay(key)
        log_event(logger, "console.replay", key=key, replayed=replayed)
        self.counter.forget()
        if not replayed:
            return ReplayResult(replayed=0, keys=[], message=f"{key} is not parked")
        return ReplayResult(replayed=1, keys=[key], message=f"replayed {key}")

    def replay_parked(self, rule: str = "", cause: str = "") -> ReplayResult:
        """Replay the parked keys of ``rule`` and/or ``cause`` that the scope allows, in batches (raises
        ``FilterError`` for a rule that names no key part)."""
        if not rule and not cause:
            raise ValueError("name a rule, a cause or both")
        match = f"*/{key_part('rule', rule)}/*/*/*"
        count = self.service.replay_matching(
            match, cause=cause or None, keep=self.scope.allows_key if self.scope.workspaces else None
        )
        log_event(logger, "console.replay_parked", rule=rule, cause=cause, replayed=count)
        self.counter.forget()
        what = " and ".join(part for part in (rule and f"rule {rule}", cause and f"cause {cause}") if part)
        return ReplayResult(replayed=count, message=f"replayed {count} parked keys of {what}")
