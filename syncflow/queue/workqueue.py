"""The Python face of one keyed work queue (docs/architecture.md §5, §6): client-go workqueue semantics
in Lua."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import IntEnum, StrEnum
from typing import Any, TypeVar

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from syncflow.config import Settings
from syncflow.kube import echoes, snapshots
from syncflow.metrics import record as metrics
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import QueueLayout
from syncflow.queue.registry import rule_of
from syncflow.queue.scripts import Scripts


class Lane(IntEnum):
    """Where a message for a key must be published."""

    NONE = 0
    EVENT = 1
    BULK = 2


class Claim(StrEnum):
    """Result of claiming a key at task start."""

    CLAIMED = "claimed"
    BUSY = "busy"
    STALE = "stale"
    GONE = "gone"
    """The key's rule is gone: the key ended at the claim, without a lease."""


class Outcome(StrEnum):
    """How a handler run ended, as far as the queue cares."""

    OK = "ok"
    AFTER = "after"
    TRANSIENT = "transient"
    ERROR = "error"
    PERMANENT = "permanent"


@dataclass(frozen=True)
class Taken:
    """A claim and what it handed over: the key's snapshot (``syncflow.kube.snapshots``) and its rule's
    registry entry (``syncflow.queue.ruleentries``), each "" for none, and how long (s) the key was pending
    (None: not known, or not claimed now)."""

    claim: Claim
    snapshot: str = ""
    rule_entry: str = ""
    waited: float | None = None


@dataclass(frozen=True)
class EventAdd:
    """The adds of one event: its keys, the object and version it came from (an echo of one of our own
    writes adds nothing; None: no origin) and its object's snapshot, encoded ("" for none)."""

    keys: Sequence[ObjectKey]
    origin: echoes.Origin | None = None
    snapshot: str = ""

    @classmethod
    def current(cls, keys: Sequence[ObjectKey]) -> EventAdd:
        """The adds of the event being handled (``echoes.event_origin``, ``snapshots.event_object``)."""
        return cls(keys, echoes.current_event(), snapshots.encoded_event())

    @property
    def origin_args(self) -> list[str]:
        """The origin as the add scripts take it: its object and resourceVersion ("", "" for none)."""
        return [self.origin.token, self.origin.resource_version] if self.origin else ["", ""]


@dataclass(frozen=True)
class DoneResult:
    """What ``done`` did: state is lost, done, delayed, backoff, parked or requeued."""

    state: str
    attempts: int
    delay: float
    lane: Lane

    @property
    def retried(self) -> bool:
        """The run failed and the key runs again: backing off, or at once (dirtied meanwhile)."""
        return self.attempts > 0 and self.state in ("backoff", "requeued")


@dataclass(frozen=True)
class RunEnd:
    """How a key's run ended, as ``done`` records it (see ``WorkQueue.done``)."""

    outcome: Outcome
    after: float = 0.0
    error: str = ""
    cause: str = ""
    own_writes: Sequence[echoes.Origin] = ()
    gone: bool = False
    """The run found the key's object (or rule) gone: an ok end drops it from the synced record."""


@dataclass(frozen=True)
class PumpResult:
    """One pump pass: its Redis time (ms), counts and the messages to publish. ``overdue`` counts
    pending keys older than the grace period that no broker scan has proved lost (yet)."""

    now: int
    promoted: int
    expired: int
    republished: int
    overdue: int
    publish: list[tuple[ObjectKey, Lane]]


@dataclass(frozen=True)
class QueueStats:
    """Sizes of one work queue's structures."""

    queue: str
    dirty: int
    pending: int
    leased: int
    delayed: int
    parked: int


@dataclass(frozen=True)
class Failure:
    """A key's failure record: attempts, first/last failure and the last error."""

    key: str
    queue: str
    attempts: int
    first_failure: datetime | None
    last_failure: datetime | None
    error: dict[str, Any]

    @property
    def cause(self) -> str:
        """What the last failure named as its cause ("" if nothing)."""
        return str(self.error.get("cause") or "")


T = TypeVar("T")


def _sent_again_if_lost(send: Callable[[], T]) -> tuple[T, bool]:
    """``send`` a lease script, and once more if its reply does not come (a dropped connection or a
    timeout: Redis may have run it); returns the reply and whether it is the second send's. Each
    lease script is safe to run twice in a row: a claim that finds its own run's token on a live
    lease is claimed again, and a done of a lease no longer held is "lost" and changes nothing.
    Without it, a lost claim reply left the key leased by a run that never started, until its lease
    expired as a strike."""
    try:
        return send(), False
    except (RedisConnectionError, RedisTimeoutError):
        return send(), True


def _done_sent(send: Callable[[], Sequence[Any]]) -> tuple[DoneResult, list[Any]]:
    """A script that starts with ``done`` (its four answers, then the rest, returned as they are),
    sent as ``_sent_again_if_lost`` sends it. A second send that finds the lease released ("lost")
    cannot tell whether the first requeued the key, so its result asks for a message on the event
    lane: a message for a key that needs none is dropped as stale at its claim."""
    reply, again = _sent_again_if_lost(send)
    result = _done_result(reply[:4])
    if again and result.state == "lost":
        result = DoneResult(result.state, result.attempts, result.delay, Lane.EVENT)
    return result, list(reply[4:])


def _time(ms: str | None) -> datetime | None:
    return datetime.fromtimestamp(int(ms) / 1000, UTC) if ms else None


ADD_BATCH = 100
"""Keys per add script call: about 1.6 ms of Redis time (16 µs per key), so a relist of many keys
never holds up the workers' claims for long."""


class WorkQueue:
    """One keyed work queue. Every method is one round trip (one script or one pipeline)."""

    def __init__(self, redis: Redis, scripts: Scripts, settings: Settings, name: str) -> None:
        self.redis = redis
        self.name = name
        self.layout = QueueLayout(settings.agent_name, name)
        self._keys = self.layout.keys
        self._scripts = scripts
        self._settings = settings
        s = settings
        self._lease_ms = round(s.lease_ttl * 1000)
        self._tuning = [s.backoff_base * 1000, s.backoff_cap * 1000, s.max_attempts]
        self._echo_limits = [echoes.ECHO_TTL_SECONDS * 1000, echoes.MAX_STORED_WRITES]

    def add(self, key: ObjectKey, *, bulk: bool = False) -> Lane:
        """Mark ``key`` dirty; returns the lane to publish one message on (``NONE``: no message). An
        event add inside ``echoes.event_origin`` of one of our own writes adds nothing."""
        [(_, lane)] = self._add([key], bulk)
        return lane

    def add_many(self, keys: Iterable[ObjectKey], *, bulk: bool = False) -> list[tuple[ObjectKey, Lane]]:
        """``add`` for many keys, one script call per ``ADD_BATCH`` keys (Redis Cluster runs no
        scripts in pipelines); returns the keys that need a message."""
        keys = list(keys)
        added = (
            pair for i in range(0, len(keys), ADD_BATCH) for pair in self._add(keys[i : i + ADD_BATCH], bulk)
        )
        return [(key, lane) for key, lane in added if lane]

    def _add(self, keys: list[ObjectKey], bulk: bool) -> list[tuple[ObjectKey, Lane]]:
        event = EventAdd(keys) if bulk else EventAdd.current(keys)  # a relist's adds have no origin
        args: list[str | int] = [int(bulk), *event.origin_args, event.snapshot, snapshots.MAX_SNAPSHOTS]
        args += map(str, keys)
        *lanes, added = self._scripts.add(self._keys, args)
        metrics.queue_added(self.name, int(added))
        return [(key, Lane(int(lane))) for key, lane in zip(keys, lanes, strict=True)]

    def add_events(self, events: Sequence[EventAdd]) -> list[tuple[ObjectKey, Lane]]:
        """The adds of several events, each as ``add`` inside the event would add its keys; one script
        call per ``ADD_BATCH`` keys at most (an event of more keys is split). Returns the keys that
        need a message."""
        added: list[tuple[ObjectKey, Lane]] = []
        args: list[str | int] = []
        keys: list[ObjectKey] = []
        for event in events:
            for start in range(0, len(event.keys), ADD_BATCH):
                piece = event.keys[start : start + ADD_BATCH]
                if len(keys) + len(piece) > ADD_BATCH:
                    added += self._add_each(args, keys)
                    args, keys = [], []
                args += [*event.origin_args, event.snapshot, len(piece), *map(str, piece)]
                keys += piece
        if keys:
            added += self._add_each(args, keys)
        return added

    def _add_each(self, args: list[str | int], keys: list[ObjectKey]) -> list[tuple[ObjectKey, Lane]]:
        *lanes, fresh = self._scripts.add_each(self._keys, [snapshots.MAX_SNAPSHOTS, *args])
        metrics.queue_added(self.name, int(fresh))
        return [(key, Lane(int(lane))) for key, lane in zip(keys, lanes, strict=True) if int(lane)]

    def claim(self, key: ObjectKey, token: str) -> Claim:
        """Take the key's lease at task start, if this message is the one to process it."""
        return self.take(key, token).claim

    def take(self, key: ObjectKey, token: str) -> Taken:
        """``claim``, with what the queue holds for the key when claimed (one round trip)."""
        args = self._claim_args(key, token)
        reply, _ = _sent_again_if_lost(lambda: self._scripts.claim(self._keys, args))
        return _taken(reply)

    def _claim_args(self, key: ObjectKey, token: str) -> list[str | float]:
        return [str(key), token, self._lease_ms, rule_of(key)]

    def owner(self, key: ObjectKey) -> str | None:
        """The token of the task holding the key's lease (expired or not), or None."""
        token = self.redis.hget(self.layout.key("O"), str(key))
        return None if token is None else _text(token)

    def renew(self, key: ObjectKey, token: str) -> bool:
        """Extend our lease; ``False`` means it is no longer ours (stop writing)."""
        return bool(self._scripts.renew(self._keys, [str(key), token, self._lease_ms]))

    def done(
        self,
        key: ObjectKey,
        token: str,
        outcome: Outcome,
        *,
        after: float = 0.0,
        error: str = "",
        cause: str = "",
        own_writes: Sequence[echoes.Origin] = (),
    ) -> DoneResult:
        """Release the lease and record the outcome (``after`` in seconds, ``error`` a JSON payload,
        ``cause`` what a failure failed on, for ``replay_cause``) and the run's ``own_writes``, whose
        echoes are then no new work (also those that came while the key was leased)."""
        return self.finish(key, token, RunEnd(outcome, after, error, cause, own_writes))

    def finish(self, key: ObjectKey, token: str, end: RunEnd) -> DoneResult:
        """``done`` with the run's end in one record."""
        args = self._done_args(key, token, end)
        result, _ = _done_sent(lambda: self._scripts.done(self._keys, args))
        return result

    def finish_claim(
        self, key: ObjectKey, token: str, end: RunEnd, following: ObjectKey
    ) -> tuple[DoneResult, Taken]:
        """``finish`` for ``key``, then ``take`` for ``following``, the next key of the same message, in
        one round trip (the claim comes after the release, as with two calls)."""
        args = [*self._claim_args(following, token), *self._done_args(key, token, end)]
        result, claimed = _done_sent(lambda: self._scripts.done_claim(self._keys, args))
        return result, _taken(claimed)

    def _done_args(self, key: ObjectKey, token: str, end: RunEnd) -> list[str | float]:
        writes = [part for w in end.own_writes for part in (w.token, w.resource_version)]
        args: list[str | float] = [str(key), token, end.outcome.value, round(end.after * 1000), end.error]
        return [*args, *self._tuning, end.cause, *self._echo_limits, int(end.gone), *writes]

    def pump(self, grace: float, verified: int) -> PumpResult:
        """Promote due delayed keys, requeue expired leases, and republish pending keys whose message
        the broker scan begun at ``verified`` (Redis ms) proved lost: sent ``grace`` seconds or more
        before it began, and not seen by it."""
        args = [round(grace * 1000), self._settings.pump_batch, *self._tuning, verified]
        now, promoted, expired, republished, overdue, added, *flat = self._scripts.pump(self._keys, args)
        metrics.queue_added(self.name, int(added))
        publish = [(ObjectKey.parse(_text(flat[i])), Lane(int(flat[i + 1]))) for i in range(0, len(flat), 2)]
        return PumpResult(int(now), int(promoted), int(expired), int(republished), int(overdue), publish)

    def touch(self, keys: Iterable[ObjectKey], started: int) -> int:
        """Mark pending keys whose message a broker scan begun at ``started`` saw; returns how many."""
        names = [str(key) for key in keys]
        if not names:
            return 0
        return int(self._scripts.touch(self._keys, [started, *names]))

    def replay(self, key: ObjectKey | str) -> Lane | None:
        """Unpark a parked key and add it as an event; ``None`` if it was not parked."""
        lane, added = self._scripts.replay(self._keys, [str(key)])
        metrics.queue_added(self.name, int(added))
        return None if int(lane) < 0 else Lane(int(lane))

    def replay_cause(self, cause: str, limit: int) -> tuple[int, list[tuple[ObjectKey, Lane]]]:
        """Retry up to ``limit`` keys failing for ``cause`` (parked or backing off) as events;
        returns how many keys left the cause's index and the messages to publish."""
        taken, added, *flat = self._scripts.replay_cause(self._keys, [cause, limit])
        metrics.queue_added(self.name, int(added))
        publish = [(ObjectKey.parse(_text(flat[i])), Lane(int(flat[i + 1]))) for i in range(0, len(flat), 2)]
        return int(taken), publish

    def held(self, keys: Sequence[ObjectKey]) -> list[ObjectKey]:
        """The keys this queue holds: dirty (pending or waiting for a lease to end), leased or backing
        off. A parked key is not held. One script call per ``pump_batch`` keys."""
        step, found = self._settings.pump_batch, []
        for i in range(0, len(keys), step):
            batch = keys[i : i + step]
            answers = self._scripts.held(self._keys, [str(key) for key in batch])
            found += [key for key, holds in zip(batch, answers, strict=True) if holds]
        return found

    def stats(self) -> QueueStats:
        """Counts of dirty, pending, leased, delayed and parked keys."""
        k = self.layout.key
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.scard(k("D"))
            for zset in ("P", "L", "W"):
                pipe.zcard(k(zset))
            pipe.hlen(k("X"))
            dirty, pending, leased, delayed, parked = pipe.execute()
        return QueueStats(self.name, dirty, pending, leased, delayed, parked)

    def count_stale(self, count: int) -> None:
        """Count ``count`` keys a task skipped as stale before claiming them, as a claim counts one."""
        self.redis.hincrby(self.layout.key("S"), Claim.STALE.value, count)

    def counters(self) -> dict[str, int]:
        """Event counters: busy, stale, lost, reclaimed, expired, republished, echoes."""
        raw = self.redis.hgetall(self.layout.key("S"))
        return {_text(name): int(value) for name, value in raw.items()}

    def parked_names(self, match: str = "*") -> Iterator[str]:
        """Every parked key matching the glob ``match``, in no order (read in bounded chunks)."""
        return (_text(k) for k, _ in self.redis.hscan_iter(self.layout.key("X"), match=match, count=1000))

    def failures(self, names: Iterable[str]) -> list[Failure]:
        """The failure records of these keys (one round trip), skipping keys without one."""
        names = list(names)
        with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                for structure in ("F", "T", "X", "E"):
                    pipe.hget(self.layout.key(structure), name)
            fields = pipe.execute()
        records = (self._failure(name, *fields[4 * i : 4 * i + 4]) for i, name in enumerate(names))
        return [record for record in records if record is not None]

    def failure(self, key: ObjectKey | str) -> Failure | None:
        """The failure record of one key (parked or backing off), or ``None``."""
        return next(iter(self.failures([str(key)])), None)

    def _failure(self, name: str, *fields: bytes | None) -> Failure | None:
        attempts, first, parked_at, error = fields  # F, T, X, E
        if attempts is None and parked_at is None:
            return None
        last = _time(_text(parked_at)) if parked_at else None
        first_at = _time(_text(first)) if first else None
        return Failure(name, self.name, int(attempts or 0), first_at, last, json.loads(error or "{}"))

    def causes(self, names: Sequence[str]) -> list[str]:
        """The cause each key's last failure named ("" for none), in one round trip."""
        if not names:
            return []
        return [
            _text(cause) if cause else "" for cause in self.redis.hmget(self.layout.key("C"), list(names))
        ]

    def is_parked(self, key: ObjectKey | str) -> bool:
        """Whether the key is parked."""
        return bool(self.redis.hexists(self.layout.key("X"), str(key)))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _taken(reply: Sequence[Any]) -> Taken:
    state, snapshot, rule, waited_ms = reply
    waited = int(waited_ms) / 1000 if int(waited_ms) >= 0 else None
    return Taken(Claim(_text(state)), _text(snapshot), _text(rule), waited)


def _done_result(reply: Sequence[Any]) -> DoneResult:
    state, attempts, delay_ms, lane = reply
    return DoneResult(_text(state), int(attempts), int(delay_ms) / 1000, Lane(int(lane)))
