"""The pump republishes only keys whose message is known lost, one bounded run at a time; on
fakeredis[lua] and on the real Redis, with messages stored as Celery's Redis transport stores them."""

from __future__ import annotations

import json
import time

import pytest
from redis import Redis

from syncflow.config import Settings, load_settings
from syncflow.queue import report
from syncflow.queue.broker import message_keys
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import pump_lock_key
from syncflow.queue.pump import PumpTotals
from syncflow.queue.service import QueueService
from tests.queue.conftest import (
    TEMPLATE_KEY,
    BrokerLists,
    RedisServer,
    Sent,
    celery_message_keys,
    celery_message_template,
    unique_agent,
)
from tests.queue.test_workqueue import redis_ms
from tests.support.waiting import wait_for

KEYS = [ObjectKey("sync", "r", "root:ws", "ns", f"obj-{i}") for i in range(300)]


def waiting_service(redis: Redis, settings: Settings, broker: BrokerLists, **tuning: object) -> QueueService:
    """KEYS added, each with its message waiting in the broker, and every message sent "long ago"."""
    service = QueueService(redis, settings.model_copy(update=tuning), broker)
    service.add_many(KEYS)
    redis.zadd(service.queues["sync"].layout.key("P"), {str(k): 0 for k in KEYS}, xx=True)
    assert broker.length() == len(KEYS)
    return service


def test_message_keys_reads_a_real_celery_message() -> None:
    assert message_keys(celery_message_template()) == [TEMPLATE_KEY]
    assert message_keys({"headers": {"task": "celery.ping"}, "body": "W1tdLCB7fSwge31d"}) == []


GRACE = 0.05


def age_all(service: QueueService) -> None:
    """Wait until every pending message and the last scan are older than the grace period."""
    newest = service.redis.zrange(service.queues["sync"].layout.key("P"), -1, -1, withscores=True)
    since = max([service.broker.scan.verified(), *(int(score) for _, score in newest)]) + GRACE * 1000
    wait_for(lambda: redis_ms(service.redis) > since, timeout=2, what="the Redis clock to pass the grace")


def test_waiting_messages_are_never_republished(
    redis: Redis, settings: Settings, broker: BrokerLists
) -> None:
    service = waiting_service(redis, settings, broker)
    for _ in range(3):
        age_all(service)
        totals = service.pump(grace=GRACE)
        assert totals is not None and totals.scanned >= len(KEYS) and totals.republished == 0
    assert broker.length() == len(KEYS)
    assert service.queues["sync"].counters().get("republished", 0) == 0
    fresh = service.pump(grace=60)
    assert fresh is not None and fresh.scanned == 0, "no scan while every message was seen lately"


def test_a_lost_message_is_republished_once(redis: Redis, settings: Settings, broker: BrokerLists) -> None:
    service = waiting_service(redis, settings, broker)
    lost = KEYS[17]
    broker.lose(lost)
    totals = service.pump(grace=1)
    assert totals is not None and (totals.republished, totals.published) == (1, 1)
    assert broker.length() == len(KEYS) and len(broker.raw(lost)) == 1
    for _ in range(2):
        age_all(service)  # its new message waits too
        totals = service.pump(grace=GRACE)
        assert totals is not None and totals.scanned >= len(KEYS) and totals.republished == 0
    assert broker.length() == len(KEYS)


def test_every_key_a_message_carries_is_seen_and_lost_with_it(
    redis: Redis, settings: Settings, broker: BrokerLists, sent: Sent
) -> None:
    together = KEYS[:8]
    service = QueueService(redis, settings, sent)
    service.add_many(together)
    redis.zadd(service.queues["sync"].layout.key("P"), {str(k): 0 for k in together}, xx=True)
    broker.push_together(together)
    for _ in range(2):
        age_all(service)
        totals = service.pump(grace=GRACE)
        assert totals is not None and (totals.scanned, totals.republished) == (1, 0)
    broker.lose(together[3])  # the message goes, and every key it carried with it
    sent.clear()
    age_all(service)
    totals = service.pump(grace=GRACE)
    assert totals is not None and totals.republished == len(together)
    assert sorted(key for key, _ in sent) == sorted(together)


def test_a_recently_delivered_message_is_live_but_one_of_a_dead_worker_is_not(
    redis: Redis, settings: Settings, broker: BrokerLists
) -> None:
    service = waiting_service(redis, settings, broker, pump_grace=60)
    running, abandoned = KEYS[1], KEYS[2]
    broker.deliver(running, delivered_at=time.time())
    broker.deliver(abandoned, delivered_at=time.time() - 3600)
    redis.zadd(service.queues["sync"].layout.key("P"), {str(k): 0 for k in KEYS}, xx=True)
    totals = service.pump()
    assert totals is not None and totals.republished == 1
    assert broker.raw(running) == [] and len(broker.raw(abandoned)) == 1


def test_each_run_stops_at_its_budget_and_the_next_one_continues(
    redis: Redis, settings: Settings, broker: BrokerLists
) -> None:
    service = waiting_service(redis, settings, broker, pump_batch=50, pump_budget=1e-6)
    lost = KEYS[-1]
    broker.lose(lost)
    runs = []
    while not runs or runs[-1].unfinished:
        totals = service.pump(grace=1)
        assert totals is not None
        runs.append(totals)
        assert totals.scanned <= 50, "one chunk per run once the budget is spent"
    assert len(runs) >= len(KEYS) // 50
    assert sum(t.scanned for t in runs) >= len(KEYS) - 1
    assert sum(t.republished for t in runs) == 1 and len(broker.raw(lost)) == 1


def test_a_run_holds_its_lock_until_it_ends(redis: Redis, settings: Settings, broker: BrokerLists) -> None:
    lock = pump_lock_key(settings.agent_name)
    seen: list[tuple[int, object]] = []

    def publish_while_checking(messages: list[tuple[ObjectKey, str]], together: bool = False) -> None:
        # Mid-run: the lock is held for far longer than a beat interval and a second run is refused.
        seen.append((int(redis.pttl(lock)), rival.pump(grace=1)))
        broker(messages, together=together)

    service = waiting_service(redis, settings, broker)
    rival = QueueService(redis, settings, broker)
    service.publisher = publish_while_checking
    broker.lose(KEYS[0])
    totals = service.pump(grace=1)
    assert totals is not None and totals.republished == 1
    [(ttl, rival_totals)] = seen
    assert ttl > 5000 and rival_totals is None
    assert redis.exists(lock) == 0
    assert rival.pump(grace=1) is not None


def test_message_keys_ignores_foreign_and_broken_messages() -> None:
    template = celery_message_template()
    broken = {**template, "body": "not base64 json"}
    assert message_keys(broken) == []
    assert message_keys(json.loads(json.dumps({**template, "headers": {}}))) == []
    no_keys = json.loads(celery_message_keys([], "sync"))
    assert message_keys(no_keys) == []


@pytest.mark.integration
def test_a_stuck_backlog_of_100k_keys_keeps_one_message_per_key(redis_server: RedisServer) -> None:
    """The issue's case: 100k keys pending, no worker. Before, every pump re-sent every waiting key."""
    settings = load_settings(agent_name=unique_agent(), redis_url=redis_server.url, pump_grace=1)
    redis = Redis.from_url(redis_server.url)
    broker = BrokerLists(redis, settings.agent_name)
    service = QueueService(redis, settings, broker)
    keys = [ObjectKey("sync", "r", "root:ws", "ns", f"obj-{i}") for i in range(100_000)]
    for i in range(0, len(keys), 10_000):
        service.add_many(keys[i : i + 10_000])
    lost = keys[50_000]
    broker.lose(lost)
    assert broker.length() == len(keys) - 1
    memory_before = int(redis.info("memory")["used_memory"])
    runs: list[PumpTotals] = []

    def pump() -> PumpTotals:
        totals = service.pump()
        assert totals is not None
        runs.append(totals)
        return totals

    wait_for(lambda: pump().republished, timeout=120, what="the lost key to be republished")
    republished_by = service.broker.scan.verified()
    wait_for(
        lambda: pump() and service.broker.scan.verified() > republished_by, timeout=120, what="another scan"
    )

    assert sum(t.republished for t in runs) == 1 and len(broker.raw(lost)) == 1
    assert broker.length() == len(keys)
    assert any(t.unfinished for t in runs), "a 100k scan takes more than one run"
    assert all(t.scanned < len(keys) for t in runs), "a run stops scanning at its budget"
    assert int(redis.info("memory")["used_memory"]) < memory_before * 1.05


def test_the_time_of_the_last_run_is_shown(redis: Redis, settings: Settings, sent: Sent) -> None:
    service = QueueService(redis, settings, sent)
    assert service.since_last_pump() is None
    assert "last pump: none for a day" in report.format_snapshot(report.queue_snapshot(service))
    service.pump()
    since = service.since_last_pump()
    assert since is not None and 0 <= since < 5
    snapshot = report.queue_snapshot(service)
    assert snapshot["last_pump_s"] is not None and "last pump: " in report.format_snapshot(snapshot)
