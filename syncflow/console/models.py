"""The console's views as pydantic models: what the JSON API returns and the pages and
``syncflow status`` render."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

State = Literal["synced", "pending", "running", "retrying", "parked"]
STATES: tuple[State, ...] = ("synced", "pending", "running", "retrying", "parked")
"""The states of a key, in the order the views show them."""


class Counts(BaseModel):
    """Keys per state."""

    synced: int = 0
    pending: int = 0
    running: int = 0
    retrying: int = 0
    parked: int = 0

    def add(self, state: State, n: int = 1) -> None:
        """Count ``n`` more keys in ``state``."""
        setattr(self, state, getattr(self, state) + n)


class GroupCounts(Counts):
    """Keys per state of one rule or one workspace."""

    name: str


class QueueDepth(BaseModel):
    """One keyed queue: how many keys wait for a worker and for how long the oldest has waited."""

    queue: str
    depth: int
    oldest_pending_seconds: float | None = None


class RuleLatency(BaseModel):
    """Sync latency quantiles of one rule (every direction of it); ``None`` is unknown."""

    name: str
    p50: float | None = None
    p99: float | None = None
    samples: int = 0


class Latency(BaseModel):
    """Sync latency quantiles from the agent's ``syncflow_sync_latency_seconds`` histogram, for the
    agent and for each rule with samples; ``None`` is unknown (no metrics endpoint answered, or nothing
    synced yet)."""

    p50: float | None = None
    p99: float | None = None
    samples: int = 0
    sources: list[str] = Field(default_factory=list)
    error: str = ""
    rules: list[RuleLatency] = Field(default_factory=list)
    """The rules with samples, in the order of their names."""

    def of_rule(self, name: str) -> RuleLatency | None:
        """The latency of rule ``name``, if it has samples."""
        return next((rule for rule in self.rules if rule.name == name), None)


class Leader(BaseModel):
    """The watcher holding the agent's leader Lease."""

    lease: str
    holder: str | None = None
    renewed: str | None = None
    error: str = ""


class Workers(BaseModel):
    """Celery workers that answered a ping."""

    live: list[str] = Field(default_factory=list)
    error: str = ""


class Overview(BaseModel):
    """Counts per rule and per workspace, the queues, latency, leader and workers."""

    agent: str
    totals: Counts
    rules: list[GroupCounts]
    workspaces: list[GroupCounts]
    queues: list[QueueDepth]
    latency: Latency
    leader: Leader
    workers: Workers
    partial: bool = False
    """The scan stopped at its cap: counts cover only part of the keys."""
    scanned: int = 0
    generated_at: datetime


class ObjectRow(BaseModel):
    """One key in a list."""

    key: str
    verb: str
    rule: str
    workspace: str
    namespace: str
    name: str
    queue: str
    state: State
    since: datetime | None = None
    """synced: when it last synced; pending: since when; parked: when; running: its lease's deadline;
    retrying: when it runs again."""
    attempts: int = 0
    cause: str = ""


class ObjectPage(BaseModel):
    """One page of keys; ``continue`` is the opaque token of the next page (absent: the last)."""

    items: list[ObjectRow]
    continue_: str | None = Field(default=None, serialization_alias="continue")
    scanned: int = 0
    """Structure entries the page examined (its work is bounded, so a page may come back short)."""


class LastError(BaseModel):
    """The last failure recorded for a key (``task``: the Celery task of the failed run)."""

    task: str = ""
    type: str = ""
    message: str = ""
    status: int | None = None
    reason: str = ""
    cause: str = ""
    outcome: str = ""
    traceback: str = ""


class History(BaseModel):
    """What the queue remembers of a key."""

    attempts: int = 0
    strikes: int = 0
    first_failure: datetime | None = None
    last_failure: datetime | None = None
    last_error: LastError | None = None
    parked_at: datetime | None = None
    last_synced: datetime | None = None
    pending_since: datetime | None = None
    retry_at: datetime | None = None
    lease_owner_task: str | None = None


class Side(BaseModel):
    """The source or the copy: where it is and the fields syncflow owns (``None``: not found)."""

    endpoint: str = ""
    path: str = ""
    object: dict[str, Any] | None = None
    error: str = ""


class DiffLine(BaseModel):
    """A field that differs between source and copy (dotted path; absent values are ``None``)."""

    path: str
    source: Any = None
    copy_: Any = Field(default=None, serialization_alias="copy")


class ObjectDetail(BaseModel):
    """One key's page: its row, history, source and copy side by side and their differences."""

    row: ObjectRow
    history: History
    source: Side | None = None
    copy_: Side | None = Field(default=None, serialization_alias="copy")
    diff: list[DiffLine] = Field(default_factory=list)
    flower_url: str | None = None


class ReplayResult(BaseModel):
    """What a replay did: how many keys were re-added and which (for one key)."""

    replayed: int
    keys: list[str] = Field(default_factory=list)
    message: str = ""
