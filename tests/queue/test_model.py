"""Model-based test: random interleavings of add / claim / done / lease expiry / worker crash /
lost or duplicated messages / pump / replay against the real scripts, checked against a model.

Properties: never two live leases on one key; no key is ever lost (every dirty key is pending,
leased, delayed or parked, and every key changed after the start of its last successful run is
somewhere in the queue); parked keys are never processed until replayed or re-added; the pump never
republishes a key whose message is waiting in the broker; after a drain, every key's last successful
run started after its last add.

Time is moved only by editing deadlines (a lease or backoff "expires" when its score is set to 0;
pending messages and the broker scan age together by an hour); backoffs are long, so the real clock
never decides anything and examples replay exactly.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from typing import Any

import fakeredis
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from redis import Redis

from syncflow.config import load_settings
from syncflow.queue.broker import Found, ScanStep
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Claim, Outcome
from tests.queue.conftest import Sent, delete_agent_keys
from tests.support.redis import session_redis_url

KEYS = [ObjectKey("sync", "r", "c", "ns", name) for name in ("a", "b", "c")]
OUTCOMES = [Outcome.OK, Outcome.TRANSIENT, Outcome.ERROR, Outcome.PERMANENT, Outcome.AFTER]
HOUR_MS = 3_600_000


class ModelScan:
    """The broker scan of the modelled broker: every scan completes at once and sees its messages."""

    def __init__(self, redis: Redis, broker: list[ObjectKey]) -> None:
        self.redis = redis
        self.broker = broker
        self.last = 0

    def verified(self) -> int:
        return self.last

    def step(self, deadline: float, begin_before: int | None, found: Found) -> ScanStep:
        if begin_before is None or self.last >= begin_before:
            return ScanStep(0, 0, False)
        seconds, micros = self.redis.time()
        self.last = int(seconds) * 1000 + int(micros) // 1000
        found(list(self.broker), self.last)
        return ScanStep(self.last, len(self.broker), True)


class ModelBroker:
    """The modelled broker: one queue, the list of keys whose message waits."""

    def __init__(self, scan: ModelScan) -> None:
        self.scan = scan

    def depths(self, queues: Sequence[str]) -> dict[str, int]:
        return {name: len(self.scan.broker) if name == "sync" else 0 for name in queues}


class QueueMachine(RuleBasedStateMachine):
    """One agent's sync queue, driven by hypothesis, with a broker modelled as a list."""

    def make_redis(self) -> Redis:
        return fakeredis.FakeRedis()

    def __init__(self) -> None:
        super().__init__()
        self.redis = self.make_redis()
        self.agent = f"m{uuid.uuid4().hex[:10]}"
        self.sent = Sent()
        self.broker: list[ObjectKey] = []
        self.scan = ModelScan(self.redis, self.broker)
        self.service = QueueService(
            self.redis,
            load_settings(agent_name=self.agent, max_attempts=3, backoff_base=100, backoff_cap=300),
            self.sent,
            ModelBroker(self.scan),
        )
        self.queue = self.service.queues["sync"]
        self.tokens = (f"t{i}" for i in itertools.count())
        self.version = dict.fromkeys(KEYS, 0)  # bumped by every add: the object changed
        self.ok_version = dict.fromkeys(KEYS, 0)  # version seen by the start of the last successful run
        self.live: dict[str, tuple[ObjectKey, int]] = {}  # running handlers with a live lease
        self.zombies: dict[str, tuple[ObjectKey, int]] = {}  # running, but their lease expired
        self.dead: dict[str, ObjectKey] = {}  # crashed while holding a live lease
        self.parked: set[ObjectKey] = set()

    # --- helpers -------------------------------------------------------------------------

    def collect(self) -> None:
        self.broker += [key for key, _ in self.sent]  # in place: the scan reads this list
        self.sent.clear()

    def members(self, structure: str) -> set[ObjectKey]:
        name = self.queue.layout.key(structure)
        raw_kind = self.redis.type(name)
        kind = raw_kind.decode() if isinstance(raw_kind, bytes) else str(raw_kind)
        read: dict[str, Any] = {
            "set": self.redis.smembers,
            "zset": lambda n: self.redis.zrange(n, 0, -1),
            "hash": self.redis.hkeys,
        }
        if kind == "none":
            return set()
        return {ObjectKey.parse(member.decode()) for member in read[kind](name)}

    def holders(self, key: ObjectKey) -> list[str]:
        return [t for t, (k, _) in self.live.items() if k == key] + [
            t for t, k in self.dead.items() if k == key
        ]

    def deliver(self, key: ObjectKey) -> None:
        token = next(self.tokens)
        claim = self.queue.claim(key, token)
        if claim is Claim.CLAIMED:
            assert key not in self.parked, f"parked key {key} was processed"
            assert not self.holders(key), f"two live leases on {key}"
            self.live[token] = (key, self.version[key])

    def finish(self, token: str, outcome: Outcome) -> None:
        key, seen = self.live.pop(token) if token in self.live else self.zombies.pop(token)
        result = self.queue.done(key, token, outcome, after=100, error="{}")
        if result.state == "lost":
            return
        assert not self.holders(key), f"{token} released {key} while another run holds it"
        if outcome is Outcome.OK:
            self.ok_version[key] = max(self.ok_version[key], seen)
        if result.state == "parked":
            self.parked.add(key)
        self.service.publish("sync", [(key, result.lane)])
        self.collect()

    def observe_parking(self) -> None:
        self.parked |= self.members("X")  # the pump parks keys whose leases keep expiring

    # --- rules ---------------------------------------------------------------------------

    @rule(key=st.sampled_from(KEYS), bulk=st.booleans())
    def add(self, key: ObjectKey, bulk: bool) -> None:
        self.version[key] += 1
        self.service.add(key, bulk=bulk)
        if not bulk:
            self.parked.discard(key)
        self.collect()

    @precondition(lambda self: self.broker)
    @rule(data=st.data(), keep=st.booleans())
    def deliver_message(self, data: st.DataObject, keep: bool) -> None:
        """Deliver any message, in any order; ``keep`` leaves a copy (a redelivery)."""
        index = data.draw(st.integers(0, len(self.broker) - 1))
        key = self.broker[index] if keep else self.broker.pop(index)
        self.deliver(key)

    @precondition(lambda self: self.broker)
    @rule(data=st.data())
    def lose_message(self, data: st.DataObject) -> None:
        self.broker.pop(data.draw(st.integers(0, len(self.broker) - 1)))

    @precondition(lambda self: self.live or self.zombies)
    @rule(data=st.data(), outcome=st.sampled_from(OUTCOMES))
    def done(self, data: st.DataObject, outcome: Outcome) -> None:
        self.finish(data.draw(st.sampled_from(sorted([*self.live, *self.zombies]))), outcome)

    @precondition(lambda self: self.live)
    @rule(data=st.data(), requeue=st.booleans())
    def crash(self, data: st.DataObject, requeue: bool) -> None:
        """A worker dies mid-run; with reject-on-worker-lost its message comes back."""
        token = data.draw(st.sampled_from(sorted(self.live)))
        key, _ = self.live.pop(token)
        self.dead[token] = key
        if requeue:
            self.broker.append(key)

    @rule(key=st.sampled_from(KEYS))
    def expire_lease(self, key: ObjectKey) -> None:
        self.redis.zadd(self.queue.layout.key("L"), {str(key): 0}, xx=True)
        for token in [t for t, (k, _) in self.live.items() if k == key]:
            self.zombies[token] = self.live.pop(token)
        for token in [t for t, k in self.dead.items() if k == key]:
            del self.dead[token]

    @rule(key=st.sampled_from(KEYS))
    def backoff_due(self, key: ObjectKey) -> None:
        self.redis.zadd(self.queue.layout.key("W"), {str(key): 0}, xx=True)

    @rule(overdue=st.booleans())
    def pump(self, overdue: bool) -> None:
        """Pump; with ``overdue`` an hour passes first for pending messages and the broker scan."""
        if overdue:
            pending = self.queue.layout.key("P")
            for member, score in self.redis.zrange(pending, 0, -1, withscores=True):
                self.redis.zadd(pending, {member: score - HOUR_MS}, xx=True)
            self.scan.last -= HOUR_MS
        pending_before, waiting = self.members("P"), set(self.broker)
        self.service.pump(grace=1.0)
        # A key pending before the pump can only be published by a republish (P, L and W are disjoint).
        for key, _ in self.sent:
            if key in pending_before:
                assert key not in waiting, f"republished {key} while its message was waiting"
        self.collect()
        self.observe_parking()
        # an expired lease is swept: its zombies are now just late
        leased = self.members("L")
        for token in [t for t, k in self.dead.items() if k not in leased]:
            del self.dead[token]

    @rule(key=st.sampled_from(KEYS))
    def replay(self, key: ObjectKey) -> None:
        if self.service.replay(str(key)):
            self.parked.discard(key)
        self.collect()

    # --- invariants ----------------------------------------------------------------------

    @invariant()
    def nothing_is_lost(self) -> None:
        dirty, pending, leased = self.members("D"), self.members("P"), self.members("L")
        delayed, parked = self.members("W"), self.members("X")
        assert pending <= dirty, "pending keys must be dirty"
        assert not pending & leased, "a leased key is never pending"
        assert dirty <= pending | leased | delayed | parked, "a dirty key is nowhere"
        assert parked == self.parked, "parked keys differ from the model"
        for key in KEYS:
            in_flight = [seen for k, seen in [*self.live.values(), *self.zombies.values()] if k == key]
            needs_work = self.version[key] > max([self.ok_version[key], *in_flight])
            if needs_work:
                assert key in dirty | leased | delayed | parked, f"{key} changed but is not queued"

    def teardown(self) -> None:
        try:
            self.drain()
        finally:
            delete_agent_keys(self.redis, self.agent)

    def drain(self) -> None:
        """Finish every run, let every lease and backoff expire, process everything to the end."""
        for token in sorted([*self.live, *self.zombies]):
            self.finish(token, Outcome.OK)
        for _ in range(500):
            for key in KEYS:
                self.expire_lease(key)
                self.backoff_due(key)
            self.pump(overdue=True)
            while self.broker:
                self.deliver(self.broker.pop())
                for token in sorted(self.live):
                    self.finish(token, Outcome.OK)
            if not (self.members("D") | self.members("L") | self.members("W")):
                break
        else:
            raise AssertionError("the queue did not drain")
        for key in KEYS:
            if key not in self.parked:
                assert self.ok_version[key] == self.version[key], f"{key}: last add never processed"


class RealRedisQueueMachine(QueueMachine):
    def make_redis(self) -> Redis:
        return Redis.from_url(session_redis_url())


# The same machine runs on fakeredis and on the real Redis production runs: both run the same scripts
# against the same model, so the examples are shared out between them (fakeredis's Lua is slower
# than a local Redis) rather than 150 on the emulation and 40 on the real thing.
TestQueueModel = QueueMachine.TestCase
TestQueueModel.settings = hypothesis_settings(max_examples=60, stateful_step_count=40, deadline=None)
TestQueueModelRealRedis = RealRedisQueueMachine.TestCase
TestQueueModelRealRedis.settings = hypothesis_settings(max_examples=60, stateful_step_count=40, deadline=None)
