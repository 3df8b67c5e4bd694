"""Every Lua script of the work queue, on fakeredis[lua] and on the real Redis (see the fixture)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from prometheus_client import REGISTRY
from redis import Redis
from redis.crc import key_slot

from syncflow.config import Settings, load_settings
from syncflow.queue.celeryconf import celery_config
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import QueueLayout
from syncflow.queue.runtime import Runtime
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Claim, Lane, Outcome, RunEnd, WorkQueue
from syncflow.sync.registry import RuleRegistry
from syncflow.util.deadline import DeadlineExceededError, deadline
from tests.queue.conftest import Sent
from tests.queue.due import SLACK, is_due_at, timed
from tests.support.waiting import wait_for

KEY = ObjectKey("sync", "certs", "root:org:team", "default", "web")
OTHER = ObjectKey("sync", "certs", "root:org:team", "", "cluster-wide")


def q(service: QueueService) -> WorkQueue:
    return service.queues["sync"]


def test_add_publishes_once_while_pending(service: QueueService, sent: Sent) -> None:
    assert service.add(KEY) is True
    assert service.add(KEY) is False
    assert sent == [(KEY, "sync")]
    stats = q(service).stats()
    assert (stats.dirty, stats.pending, stats.leased) == (1, 1, 0)


def test_add_many_sends_one_message_per_key(service: QueueService, sent: Sent) -> None:
    keys = [ObjectKey("sync", "r", "c", "ns", f"n{i % 10}") for i in range(1000)]
    assert service.add_many(keys) == 10
    assert sorted(k.name for k, _ in sent) == [f"n{i}" for i in range(10)]


def test_claim_takes_the_lease_once(service: QueueService) -> None:
    service.add(KEY)
    assert q(service).claim(KEY, "a") is Claim.CLAIMED
    assert q(service).claim(KEY, "b") is Claim.BUSY
    assert q(service).done(KEY, "a", Outcome.OK).state == "done"
    assert q(service).claim(KEY, "c") is Claim.STALE
    assert q(service).counters() == {"busy": 1, "stale": 1}
    assert q(service).stats().leased == 0


def test_finish_claim_releases_one_key_then_claims_the_next(service: QueueService, sent: Sent) -> None:
    """One round trip: the first key's outcome is recorded as ``done`` records it, then the next key
    is claimed as ``take`` claims it (its snapshot and rule entry included)."""
    queue = q(service)
    service.add_many([KEY, OTHER])
    assert queue.claim(KEY, "a") is Claim.CLAIMED
    service.add(KEY)  # an event while leased: the done requeues it
    result, taken = queue.finish_claim(KEY, "a", RunEnd(Outcome.OK), OTHER)
    assert (result.state, result.lane) == ("requeued", Lane.EVENT)
    assert taken.claim is Claim.CLAIMED and queue.owner(OTHER) == "a"
    assert queue.owner(KEY) is None and queue.stats().leased == 1
    result, taken = queue.finish_claim(OTHER, "a", RunEnd(Outcome.PERMANENT, error='{"error": "x"}'), OTHER)
    assert result.state == "parked" and taken.claim is Claim.STALE, "a parked key is not claimed"
    assert queue.claim(KEY, "b") is Claim.CLAIMED
    result, taken = queue.finish_claim(KEY, "stolen", RunEnd(Outcome.OK), OTHER)
    assert result.state == "lost" and taken.claim is Claim.STALE
    assert queue.owner(KEY) == "b", "a done with another token releases nothing"


def test_a_claim_sent_again_by_the_run_holding_the_lease_is_claimed_again(service: QueueService) -> None:
    """The queue (or RedisCluster's client) sends a script again when its reply was lost: the run's
    own second claim finds the lease it took and keeps it (renewed, without the snapshot the first
    claim took); any other token, e.g. a redelivered copy of the message, is still busy."""
    queue = q(service)
    service.add(KEY)
    assert queue.claim(KEY, "task#run-1") is Claim.CLAIMED
    assert queue.claim(KEY, "task#run-2") is Claim.BUSY, "another run of the same message"
    again = queue.take(KEY, "task#run-1")
    assert (again.claim, again.snapshot) == (Claim.CLAIMED, "")
    assert queue.owner(KEY) == "task#run-1" and queue.stats().leased == 1
    assert queue.counters()["reclaimed"] == 1 and queue.counters()["busy"] == 1
    assert queue.done(KEY, "task#run-1", Outcome.OK).state == "done"
    assert queue.claim(KEY, "task#run-1") is Claim.STALE, "after its done the run holds nothing"


def test_a_key_of_a_gone_rule_ends_at_its_claim_without_a_lease(service: QueueService) -> None:
    """No run of a gone rule takes a lease, so a release waiting for the rule's runs never waits for
    one; the key leaves the queue with its failure record, as a done key does."""
    queue = q(service)
    service.add(KEY)
    assert queue.claim(KEY, "a") is Claim.CLAIMED  # no registry entry yet: a claim as ever
    assert queue.done(KEY, "a", Outcome.TRANSIENT, error='{"error": "x"}').state == "backoff"
    RuleRegistry(service.redis, service.settings.agent_name).mark_gone(KEY.rule)
    service.add(KEY)  # an event: pending again, its failure still on record
    taken = queue.take(KEY, "b")
    assert taken.claim is Claim.GONE and '"gone"' in taken.rule_entry
    stats = queue.stats()
    assert (stats.dirty, stats.pending, stats.leased, stats.delayed) == (0, 0, 0, 0)
    assert queue.owner(KEY) is None and service.failure(str(KEY)) is None
    assert queue.counters()["gone"] == 1
    assert queue.take(KEY, "c").claim is Claim.STALE, "nothing is left to claim"


def test_add_while_leased_is_processed_again_after_done(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    q(service).claim(KEY, "a")
    assert service.add(KEY) is False  # no message while leased
    assert service.add(KEY) is False
    result = q(service).done(KEY, "a", Outcome.OK)
    assert (result.state, result.lane) == ("requeued", Lane.EVENT)
    assert q(service).claim(KEY, "b") is Claim.CLAIMED


def test_success_forgets_failures(service: QueueService) -> None:
    service.add(KEY)
    q(service).claim(KEY, "a")
    assert q(service).done(KEY, "a", Outcome.TRANSIENT, error="{}").attempts == 1
    assert q(service).failure(KEY) is not None
    service.add(KEY)  # an event skips the backoff
    q(service).claim(KEY, "b")
    q(service).done(KEY, "b", Outcome.OK)
    assert q(service).failure(KEY) is None


def test_held_names_the_keys_a_run_will_come_for(service: QueueService) -> None:
    """Pending, leased and backing-off keys are held (a resync leaves them be); done, parked and
    unknown keys are not."""
    backing_off, parked = (ObjectKey("sync", "certs", "c", "ns", name) for name in ("backing-off", "parked"))
    service.add_many([KEY, OTHER, backing_off, parked])
    queue = q(service)
    queue.claim(OTHER, "a")  # leased
    queue.claim(backing_off, "b")
    assert queue.done(backing_off, "b", Outcome.TRANSIENT, error="{}").state == "backoff"
    queue.claim(parked, "c")
    assert queue.done(parked, "c", Outcome.PERMANENT, error="{}").state == "parked"
    done, unknown = (ObjectKey("sync", "certs", "c", "ns", name) for name in ("done", "unknown"))
    service.add(done)
    queue.claim(done, "d")
    queue.done(done, "d", Outcome.OK)
    everything = [KEY, OTHER, backing_off, parked, done, unknown]
    assert service.held(everything) == {KEY, OTHER, backing_off}
    status = ObjectKey("status", "certs", "c", "ns", "web")
    service.add(status)
    assert service.held([status, KEY]) == {status, KEY}  # each key asks its own queue


def redis_ms(redis: Redis) -> int:
    seconds, micros = redis.time()
    return int(seconds) * 1000 + int(micros) // 1000


def age_pending(service: QueueService) -> None:
    """Wait until every pending entry is at least 1 ms old (so ``pump(grace=0)`` sees it)."""
    scores = q(service).redis.zrange(q(service).layout.key("P"), -1, -1, withscores=True)
    newest = max((float(entry[1]) for entry in scores), default=0.0)
    wait_for(lambda: redis_ms(service.redis) > newest, timeout=2, what="the Redis clock to move")


def fail(service: QueueService, outcome: Outcome, token: str) -> tuple[str, int, float]:
    """Process KEY once (wherever it waits) and fail it."""
    queue = q(service)
    queue.redis.zadd(queue.layout.key("W"), {str(KEY): 0}, xx=True)  # make any backoff due now
    service.pump()
    assert queue.claim(KEY, token) is Claim.CLAIMED
    result = queue.done(KEY, token, outcome, error='{"error": "boom", "type": "RuntimeError"}')
    return result.state, result.attempts, result.delay


def test_transient_errors_back_off_exponentially_to_the_cap_and_never_park(
    redis: Redis, settings: Settings, sent: Sent
) -> None:
    tuned = settings.model_copy(update={"backoff_base": 0.005, "backoff_cap": 0.02, "max_attempts": 3})
    service = QueueService(redis, tuned, sent)
    service.add(KEY)
    delays = [fail(service, Outcome.TRANSIENT, f"t{i}") for i in range(5)]
    assert delays == [
        ("backoff", n, d) for n, d in zip(range(1, 6), [0.005, 0.01, 0.02, 0.02, 0.02], strict=True)
    ]
    assert not q(service).is_parked(KEY)


def test_unclassified_errors_park_after_max_attempts(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    assert [fail(service, Outcome.ERROR, f"t{i}")[:2] for i in range(3)] == [
        ("backoff", 1),
        ("backoff", 2),
        ("parked", 3),
    ]
    stats = q(service).stats()
    assert (stats.parked, stats.delayed, stats.dirty, stats.pending) == (1, 0, 0, 0)
    sent.clear()
    assert service.pump(grace=0).published == 0
    assert sent == []


def test_permanent_error_parks_at_once_with_the_error(service: QueueService) -> None:
    service.add(KEY)
    assert fail(service, Outcome.PERMANENT, "a")[:2] == ("parked", 1)
    [failure] = service.parked()
    assert (failure.key, failure.attempts, failure.error["error"]) == (str(KEY), 1, "boom")
    assert failure.first_failure is not None and failure.last_failure is not None


def test_permanent_error_with_a_newer_event_is_processed_again(service: QueueService) -> None:
    service.add(KEY)
    q(service).claim(KEY, "a")
    service.add(KEY)  # a fresh event while the failing run is still going
    result = q(service).done(KEY, "a", Outcome.PERMANENT, error="{}")
    assert (result.state, result.lane) == ("requeued", Lane.EVENT)
    assert not q(service).is_parked(KEY)


def test_requeue_after_waits_then_pump_publishes(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    q(service).claim(KEY, "a")
    assert q(service).done(KEY, "a", Outcome.AFTER, after=0.2).state == "delayed"
    sent.clear()
    assert service.pump().published == 0  # not due yet
    wait_for(lambda: service.pump().promoted, timeout=5, what="the delayed key to come due")
    assert sent == [(KEY, "sync")]
    assert q(service).claim(KEY, "b") is Claim.CLAIMED


def test_event_add_skips_backoff(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    fail(service, Outcome.TRANSIENT, "a")
    sent.clear()
    assert service.add(KEY) is True
    assert q(service).stats().delayed == 0


def test_bulk_lane_and_upgrade_to_event(service: QueueService, sent: Sent) -> None:
    assert service.add(KEY, bulk=True) is True
    assert service.add(KEY, bulk=True) is False
    assert service.add(KEY) is True  # upgrade: a second message on the event lane
    assert service.add(KEY) is False
    assert sent == [(KEY, "sync-bulk"), (KEY, "sync")]
    assert q(service).claim(KEY, "a") is Claim.CLAIMED
    assert q(service).claim(KEY, "b") is Claim.BUSY  # the other copy is harmless


def test_dirty_while_leased_keeps_the_lane_of_its_reason(service: QueueService) -> None:
    service.add(KEY, bulk=True)
    q(service).claim(KEY, "a")
    service.add(KEY, bulk=True)
    assert q(service).done(KEY, "a", Outcome.OK).lane is Lane.BULK
    q(service).claim(KEY, "b")
    service.add(KEY, bulk=True)
    service.add(KEY)
    assert q(service).done(KEY, "b", Outcome.OK).lane is Lane.EVENT


def test_bulk_add_leaves_parked_keys_but_an_event_unparks(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    fail(service, Outcome.PERMANENT, "a")
    sent.clear()
    assert service.add(KEY, bulk=True) is False
    assert q(service).is_parked(KEY)
    assert service.add(KEY) is True
    assert not q(service).is_parked(KEY)
    assert q(service).failure(KEY) is None  # attempts start over
    assert sent == [(KEY, "sync")]


def test_replay_unparks_and_adds(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    fail(service, Outcome.PERMANENT, "a")
    sent.clear()
    assert service.replay(str(OTHER)) is False
    assert service.replay(str(KEY)) is True
    assert sent == [(KEY, "sync")]
    assert service.parked() == []
    assert q(service).claim(KEY, "b") is Claim.CLAIMED


def test_replay_matching_glob(service: QueueService) -> None:
    keys = [ObjectKey("sync", "r", "c", "ns", f"{prefix}-{i}") for prefix in ("a", "b") for i in range(3)]
    for i, key in enumerate(keys):
        service.add(key)
        q(service).claim(key, f"t{i}")
        q(service).done(key, f"t{i}", Outcome.PERMANENT, error="{}")
    assert len(service.parked()) == 6
    assert service.replay_matching("*/a-*") == 3
    assert sorted(f.key for f in service.parked()) == sorted(str(k) for k in keys[3:])


def test_parked_lists_at_most_limit_keys_in_key_order_and_counts_them_all(service: QueueService) -> None:
    keys = [ObjectKey("sync", "r", "c", "ns", f"n{i:02}") for i in range(12)]
    for i, key in enumerate(keys):
        service.add(key)
        q(service).claim(key, f"t{i}")
        q(service).done(key, f"t{i}", Outcome.PERMANENT, error="{}")
    assert [f.key for f in service.parked(limit=5)] == [str(k) for k in keys[:5]]
    assert service.parked_count() == 12
    assert [f.key for f in service.parked("*/n1*")] == [str(k) for k in keys[10:]]
    assert service.parked_count("*/n1*") == 2


def test_expired_lease_is_requeued_and_counts_as_an_attempt(
    redis: Redis, settings: Settings, sent: Sent
) -> None:
    short = settings.model_copy(update={"task_time_limit": 0.05, "lease_ttl": 0.1})
    service = QueueService(redis, short, sent)
    service.add(KEY)
    assert q(service).claim(KEY, "dead") is Claim.CLAIMED
    wait_for(lambda: service.pump().expired, timeout=5, what="the lease to expire")
    failure = q(service).failure(KEY)
    assert failure is not None and failure.attempts == 1 and failure.error["type"] == "LeaseExpired"
    sent.clear()
    wait_for(lambda: service.pump().promoted, timeout=5, what="the backoff to end")
    assert sent == [(KEY, "sync")]
    assert q(service).claim(KEY, "new") is Claim.CLAIMED
    assert q(service).done(KEY, "dead", Outcome.OK).state == "lost"  # the old holder lost it
    assert q(service).done(KEY, "new", Outcome.OK).state == "done"


def test_add_takes_over_an_expired_lease(redis: Redis, settings: Settings, sent: Sent) -> None:
    short = settings.model_copy(update={"task_time_limit": 0.05, "lease_ttl": 0.1})
    service = QueueService(redis, short, sent)
    service.add(KEY)
    q(service).claim(KEY, "dead")
    wait_for(lambda: service.add(KEY), timeout=5, what="add to publish past the expired lease")
    assert q(service).claim(KEY, "new") is Claim.CLAIMED


def test_poison_key_that_keeps_losing_its_lease_is_parked(
    redis: Redis, settings: Settings, sent: Sent
) -> None:
    short = settings.model_copy(update={"task_time_limit": 0.02, "lease_ttl": 0.03, "max_attempts": 2})
    service = QueueService(redis, short, sent)
    service.add(KEY)
    assert q(service).claim(KEY, "a") is Claim.CLAIMED
    wait_for(lambda: service.pump().expired, timeout=5, what="the first lease to expire")
    wait_for(lambda: service.pump().promoted, timeout=5, what="the backoff to end")
    assert q(service).claim(KEY, "b") is Claim.CLAIMED
    wait_for(lambda: service.pump().expired, timeout=5, what="the second lease to expire")
    assert q(service).is_parked(KEY)
    assert q(service).stats().delayed == 0


def test_pump_republishes_pending_keys_older_than_grace(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    service.add(OTHER)
    q(service).claim(OTHER, "a")
    sent.clear()
    assert service.pump().republished == 0  # younger than the grace period
    age_pending(service)
    totals = service.pump(grace=0)
    assert (totals.republished, totals.published) == (1, 1)
    assert sent == [(KEY, "sync")]
    assert q(service).claim(KEY, "x") is Claim.CLAIMED
    assert q(service).claim(KEY, "y") is Claim.BUSY
    assert q(service).counters()["republished"] == 1


def test_pump_drains_more_than_one_batch(redis: Redis, settings: Settings, sent: Sent) -> None:
    service = QueueService(redis, settings.model_copy(update={"pump_batch": 3}), sent)
    keys = [ObjectKey("sync", "r", "c", "", f"n{i}") for i in range(10)]
    service.add_many(keys)
    sent.clear()
    age_pending(service)
    assert service.pump(grace=0).republished == 10
    assert len(sent) == 10


def test_renew_extends_only_our_lease(service: QueueService) -> None:
    queue = q(service)
    service.add(KEY)
    queue.claim(KEY, "a")

    def deadline() -> float:
        return float(queue.redis.zscore(queue.layout.key("L"), str(KEY)) or 0)

    before = deadline()
    assert queue.renew(KEY, "b") is False
    wait_for(lambda: queue.renew(KEY, "a") and deadline() > before, what="the lease deadline to move")


def test_scripts_survive_script_flush(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    service.redis.script_flush()
    assert service.add(OTHER) is True
    assert q(service).claim(OTHER, "a") is Claim.CLAIMED


def test_time_comes_from_redis(service: QueueService) -> None:
    service.add(KEY)
    score = float(service.redis.zscore(q(service).layout.key("P"), str(KEY)) or 0)
    seconds, micros = service.redis.time()
    assert abs(score / 1000 - (seconds + micros / 1e6)) < 5


def test_all_keys_of_a_queue_share_one_cluster_slot() -> None:
    layout = QueueLayout("agent-a", "sync")
    assert len({key_slot(k.encode()) for k in layout.keys}) == 1
    assert len(set(layout.keys)) == len(layout.keys)


def test_agents_sharing_one_redis_are_independent(redis: Redis, service: QueueService, sent: Sent) -> None:
    other = QueueService(redis, load_settings(agent_name=service.settings.agent_name + "-b"), sent)
    try:
        assert service.add(KEY) is True
        assert other.add(KEY) is True
        assert other.queues["sync"].claim(KEY, "a") is Claim.CLAIMED
        assert q(service).claim(KEY, "b") is Claim.CLAIMED
    finally:
        for queue in other.queues.values():
            redis.delete(*queue.layout.keys)


def test_unknown_verb_is_refused(service: QueueService) -> None:
    with pytest.raises(LookupError, match="nope"):
        service.add(ObjectKey("nope", "r", "c", "", "n"))


def test_budget_allows_the_burst_then_spaces_requests(redis: Redis, settings: Settings, sent: Sent) -> None:
    limited = load_settings(**{**settings.model_dump(), "endpoint_limits": {"kcp": {"qps": 20, "burst": 3}}})
    budget = QueueService(redis, limited, sent).budget
    answers = [timed(lambda: budget.reserve("kcp")) for _ in range(5)]
    assert [a.wait for a in answers[:3]] == [0, 0, 0]
    first = answers[0]
    assert is_due_at(answers[3], first, 0.05), "1/20 s per request after the burst"
    assert is_due_at(answers[4], first, 0.10)
    assert budget.reserve("other") == 0  # endpoints have separate buckets
    budget.take("kcp")
    assert time.time() >= first.began + 0.15 - SLACK, "take waited until its token was due"


def test_two_pumps_at_once_publish_each_overdue_key_once(
    redis: Redis, settings: Settings, sent: Sent
) -> None:
    service = QueueService(redis, settings, sent)
    keys = [ObjectKey("sync", "r", "c", "", f"n{i}") for i in range(200)]
    service.add_many(keys)
    sent.clear()
    pending = q(service).layout.key("P")
    redis.zadd(pending, {str(k): 0 for k in keys}, xx=True)  # every message waited "forever"
    # Two beats firing together: one run takes the lock, the other skips; every lost key goes out once.
    with ThreadPoolExecutor(2) as pool:
        totals = list(pool.map(lambda _: service.pump(grace=1), range(2)))
    assert sum(t.republished for t in totals if t is not None) == 200
    assert sorted(k.name for k, _ in sent) == sorted(k.name for k in keys)


def test_transient_failures_do_not_count_towards_parking(service: QueueService) -> None:
    service.add(KEY)
    for i in range(5):  # e.g. kcp unreachable for a while (max_attempts is 3)
        assert fail(service, Outcome.TRANSIENT, f"t{i}")[0] == "backoff"
    assert fail(service, Outcome.ERROR, "e1")[:2] == ("backoff", 6)
    assert fail(service, Outcome.ERROR, "e2")[:2] == ("backoff", 7)
    assert fail(service, Outcome.ERROR, "e3")[:2] == ("parked", 8)


def test_budget_never_waits_past_the_task_deadline(redis: Redis, settings: Settings, sent: Sent) -> None:
    limited = load_settings(**{**settings.model_dump(), "endpoint_limits": {"kcp": {"qps": 1, "burst": 1}}})
    budget = QueueService(redis, limited, sent).budget
    budget.take("kcp")  # the burst
    started = time.monotonic()
    with deadline(0.2), pytest.raises(DeadlineExceededError, match="budget of kcp"):
        budget.take("kcp")  # the next token comes in ~1 s
    assert time.monotonic() - started < 0.9, "it gave up at once, without waiting for the token"


def test_the_runtime_redis_client_has_timeouts(settings: Settings) -> None:
    runtime = Runtime(Sent(), settings)
    options = runtime.service.redis.connection_pool.connection_kwargs
    assert options["socket_connect_timeout"] == 5 and options["socket_timeout"] == 10
    transport = celery_config(settings)["broker_transport_options"]
    assert transport["socket_connect_timeout"] == 5 and transport["socket_timeout"] == 30


def test_a_claim_says_how_long_its_key_was_pending_once(service: QueueService) -> None:
    queue = q(service)
    service.add(KEY)
    queue.touch([KEY], redis_ms(service.redis) + 60_000)  # a broker scan moves the score, not the wait
    taken = queue.take(KEY, "a#1")
    assert taken.claim is Claim.CLAIMED
    assert taken.waited is not None and 0 <= taken.waited < 60
    again = queue.take(KEY, "a#1")  # the same run's claim sent again: no second wait
    assert (again.claim, again.waited) == (Claim.CLAIMED, None)
    assert queue.take(KEY, "b#1").waited is None  # busy
    assert not queue.redis.hlen(queue.layout.key("Q")), "a claimed key leaves no pending time behind"


def test_a_key_promoted_after_its_backoff_counts_as_an_add(service: QueueService) -> None:
    def adds() -> float:
        return REGISTRY.get_sample_value("workqueue_adds_total", {"name": "sync"}) or 0.0

    queue = q(service)
    service.add(KEY)
    assert queue.claim(KEY, "a") is Claim.CLAIMED
    queue.done(KEY, "a", Outcome.TRANSIENT, error="{}")
    queue.redis.zadd(queue.layout.key("W"), {str(KEY): 0}, xx=True)  # its backoff is due now
    before = adds()
    assert queue.pump(grace=60, verified=0).promoted == 1
    assert adds() == before + 1
