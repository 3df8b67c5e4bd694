"""The queue as producers, workers and operators use it: every keyed queue plus publishing."""

from __future__ import annotations

import heapq
import itertools
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Protocol

from redis import Redis

from syncflow.config import Settings
from syncflow.kube import snapshots
from syncflow.queue.broker import Broker, open_broker
from syncflow.queue.budget import RequestBudget
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import BULK_QUEUE, CELERY_QUEUES, KEYED_QUEUES, pump_last_key
from syncflow.queue.pump import Pump, PumpTotals
from syncflow.queue.registry import queue_of
from syncflow.queue.scripts import Scripts
from syncflow.queue.workqueue import EventAdd, Failure, Lane, QueueStats, WorkQueue


class Publisher(Protocol):
    """Publishes messages for (key, Celery queue) pairs; a message carries keys only, one or more."""

    def __call__(self, messages: Sequence[tuple[ObjectKey, str]], /, *, together: bool = False) -> None:
        """Publish ``messages``; ``together``: in as few messages as a message's size allows (keys put
        back by a task that did not reach them), not spread over several for worker processes to share."""


def _by_queue(keys: Iterable[ObjectKey]) -> dict[str, list[ObjectKey]]:
    """``keys`` grouped by the name of their work queue."""
    grouped: dict[str, list[ObjectKey]] = defaultdict(list)
    for key in keys:
        grouped[queue_of(key.verb)].append(key)
    return grouped


class QueueService:
    """All keyed queues of one agent, and the publisher that sends their messages."""

    def __init__(
        self, redis: Redis, settings: Settings, publisher: Publisher, broker: Broker | None = None
    ) -> None:
        self.redis = redis
        self.settings = settings
        self.publisher = publisher
        self.broker = broker or open_broker(redis, settings)
        scripts = Scripts.register(redis)
        self.queues = {name: WorkQueue(redis, scripts, settings, name) for name in KEYED_QUEUES}
        self.budget = RequestBudget(redis, scripts, settings)

    def queue_for(self, key: ObjectKey) -> WorkQueue:
        """The work queue of the key's verb."""
        return self.queues[queue_of(key.verb)]

    def publish(self, queue: str, items: Iterable[tuple[ObjectKey, Lane]]) -> int:
        """Publish the keys on the Celery queue of their lane; returns how many keys."""
        messages = [(key, BULK_QUEUE if lane is Lane.BULK else queue) for key, lane in items if lane]
        if messages:
            self.publisher(messages)
        return len(messages)

    def resend(self, keys: Iterable[ObjectKey], celery_queue: str) -> None:
        """Publish these keys again on ``celery_queue``, together: keys a task took but did not start
        (a new message is harmless for a key that needs none: its claim finds it stale). They are the
        rest of one message, so they go back as one message (up to its size), not spread again."""
        messages = [(key, celery_queue) for key in keys]
        if messages:
            self.publisher(messages, together=True)

    def add(self, key: ObjectKey, *, bulk: bool = False) -> bool:
        """A watch event (or, with ``bulk``, a relist/resync) for ``key``; True if it was published."""
        queue = self.queue_for(key)
        return self.publish(queue.name, [(key, queue.add(key, bulk=bulk))]) > 0

    def add_many(self, keys: Iterable[ObjectKey], *, bulk: bool = False) -> int:
        """``add`` for many keys, pipelined per queue; returns how many keys were published."""
        return sum(
            self.publish(name, self.queues[name].add_many(batch, bulk=bulk))
            for name, batch in _by_queue(keys).items()
        )

    def add_seen(
        self, objects: Mapping[ObjectKey, bytes], side: str, uncopied: Collection[ObjectKey] = ()
    ) -> int:
        """Event adds of ``objects``' keys, each keeping its object (as listed on endpoint ``side``,
        encoded by ``snapshots.listed``) as its snapshot, as a watch event of it would, marked when its
        key is one of ``uncopied`` (listed without a copy); see ``add_events``."""
        return self.add_events(
            EventAdd((key,), snapshot=snapshots.encoded_listed(side, obj, uncopied=key in uncopied))
            for key, obj in objects.items()
        )

    def add_events(self, events: Iterable[EventAdd]) -> int:
        """The adds of several events (the events of a watch's read, the objects of a listing): one
        script call per ``ADD_BATCH`` keys of a queue, the messages published together. Returns how
        many keys were published."""
        grouped: dict[str, list[EventAdd]] = defaultdict(list)
        for event in events:
            for name, keys in _by_queue(event.keys).items():
                grouped[name].append(EventAdd(keys, event.origin, event.snapshot))
        return sum(self.publish(name, self.queues[name].add_events(items)) for name, items in grouped.items())

    def held(self, keys: Iterable[ObjectKey]) -> set[ObjectKey]:
        """Which of ``keys`` their queues hold: pending, leased or backing off (one script call per
        ``pump_batch`` keys of a queue)."""
        return {key for name, batch in _by_queue(keys).items() for key in self.queues[name].held(batch)}

    def count_stale(self, keys: Iterable[ObjectKey]) -> None:
        """Count ``keys``, skipped as stale without a claim each, in their queues' ``stale`` counters
        (one call per queue)."""
        for name, batch in _by_queue(keys).items():
            self.queues[name].count_stale(len(batch))

    def pump(self, grace: float | None = None) -> PumpTotals | None:
        """One bounded pump run over every queue (see ``syncflow.queue.pump``); None if another
        run is in progress. ``grace`` overrides the ``pump_grace`` setting."""
        return Pump(self.redis, self.settings, self.queues, self.publish, self.broker.scan).run(grace)

    def since_last_pump(self) -> float | None:
        """Seconds since the last pump run ended (None: none in the last day)."""
        last = self.redis.get(pump_last_key(self.settings.agent_name))
        seconds, micros = self.redis.time()  # two calls: Redis Cluster pipelines no TIME
        return None if last is None else max(0.0, seconds + micros / 1e6 - int(last) / 1000)

    def replay(self, key: str) -> bool:
        """Unpark ``key`` and add it as an event; False if it is not parked."""
        for queue in self.queues.values():
            lane = queue.replay(key)
            if lane is not None:
                self.publish(queue.name, [(ObjectKey.parse(key), lane)])
                return True
        return False

    def replay_cause(self, cause: str) -> int:
        """Retry now every key whose last failure named ``cause`` (parked or backing off), in
        batches of ``pump_batch``; returns how many were re-added. Call it when the cause has gone,
        e.g. a permission claim was accepted or an endpoint answers again."""
        readded = 0
        for queue in self.queues.values():
            while True:
                taken, publish = queue.replay_cause(cause, self.settings.pump_batch)
                readded += self.publish(queue.name, publish)
                if taken < self.settings.pump_batch:
                    break
        return readded

    def replay_matching(
        self, match: str = "*", *, cause: str | None = None, keep: Callable[[str], bool] | None = None
    ) -> int:
        """Replay every parked key matching the glob, in batches of ``pump_batch``; only those whose
        last failure named ``cause`` (if given) and that ``keep`` accepts (if given). Returns how many
        were replayed."""
        replayed = 0
        for queue in self.queues.values():
            names = queue.parked_names(match)
            while batch := list(itertools.islice(names, self.settings.pump_batch)):
                if keep is not None:
                    batch = [name for name in batch if keep(name)]
                if cause is not None:
                    batch = [
                        name for name, named in zip(batch, queue.causes(batch), strict=True) if named == cause
                    ]
                lanes = [(ObjectKey.parse(name), queue.replay(name)) for name in batch]
                replayed += self.publish(queue.name, [(key, lane) for key, lane in lanes if lane is not None])
        return replayed

    def forget_synced(self, keys: Iterable[str]) -> None:
        """Drop these keys from their queues' synced record (one round trip): keys of an object that is
        gone, e.g. its ``status`` key when its ``sync`` run removed the copy. Unknown verbs are skipped."""
        with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                try:
                    queue = self.queue_for(ObjectKey.parse(key))
                except (LookupError, ValueError):
                    continue
                pipe.hdel(queue.layout.key("K"), key)
            pipe.execute()

    def stats(self) -> list[QueueStats]:
        """Structure sizes of every keyed queue."""
        return [queue.stats() for queue in self.queues.values()]

    def parked(self, match: str = "*", limit: int = 1000) -> list[Failure]:
        """The failure records of the first ``limit`` parked keys (by key) matching the glob; only
        ``limit`` names are held at a time, however many keys are parked."""
        first = heapq.nsmallest(
            limit,
            ((name, queue) for queue in self.queues.values() for name in queue.parked_names(match)),
            key=lambda entry: entry[0],
        )
        failures = [
            failure
            for queue in self.queues.values()
            for failure in queue.failures(name for name, owner in first if owner is queue)
        ]
        return sorted(failures, key=lambda failure: failure.key)

    def parked_count(self, match: str = "*") -> int:
        """How many parked keys match the glob (every parked key for ``*``)."""
        if match == "*":
            return sum(int(self.redis.hlen(queue.layout.key("X"))) for queue in self.queues.values())
        return sum(1 for queue in self.queues.values() for _ in queue.parked_names(match))

    def failure(self, key: str) -> Failure | None:
        """The failure record of ``key`` in whichever queue has one."""
        return next((f for q in self.queues.values() if (f := q.failure(key)) is not None), None)

    def broker_backlog(self) -> dict[str, int]:
        """Messages waiting in each Celery queue of the broker."""
        return self.broker.depths(CELERY_QUEUES)
