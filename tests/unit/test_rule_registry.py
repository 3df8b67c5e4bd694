"""The rule registry (watcher writes, workers read) and the worker's handling of rules that are not ready:
a key is never dropped for want of a rule, only for a rule that is gone."""

from __future__ import annotations

import functools
import re

import fakeredis
import pytest

from syncflow.config import load_settings
from syncflow.queue import ruleentries
from syncflow.queue.errors import RequeueAfter, TransientError
from syncflow.queue.keys import ObjectKey
from syncflow.queue.leases import rules_with_leases
from syncflow.queue.registry import register_verb
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Outcome
from syncflow.sync import worker as worker_module
from syncflow.sync.keys import RELATED, STATUS, SYNC
from syncflow.sync.registry import UNKNOWN, RuleEntry, RuleRegistry
from syncflow.sync.rule import Resource, Side, SyncRule
from syncflow.sync.worker import RuleWorker

register_verb(SYNC, "sync", names_rule=True)
register_verb(STATUS, "status", names_rule=True)
register_verb("control-thing", "sync")  # a control verb: its key's rule part is only a name

THINGS = Resource(group="example.com", version="v1", plural="things", kind="Thing", namespaced=True)


def rule(name: str = "things", **changes: object) -> SyncRule:
    return SyncRule(
        name=name,
        agent="agent",
        source=Side(endpoint="kcp", resource=THINGS),
        target=Side(endpoint="service", resource=THINGS),
        **changes,  # type: ignore[arg-type]
    )


@pytest.fixture
def redis() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis()


class NoEndpoints:
    def api(self, endpoint: str, cluster: str) -> object:
        raise AssertionError("no API call expected")

    def everywhere(self, endpoint: str) -> list[object]:
        raise AssertionError("no API call expected")


class NoSourceObjects(NoEndpoints):
    def everywhere(self, endpoint: str) -> list[object]:
        return []  # no source object to release


def worker(registry: RuleRegistry, redis: fakeredis.FakeRedis, endpoints: object | None = None) -> RuleWorker:
    running = functools.partial(rules_with_leases, redis, "agent", (SYNC, RELATED))
    return RuleWorker(registry, endpoints or NoEndpoints(), running)  # type: ignore[arg-type]


KEY = ObjectKey("sync", "things", "c1", "default", "a")


def test_ready_rules_round_trip_and_unchanged_entries_are_not_rewritten(redis: fakeredis.FakeRedis) -> None:
    registry = RuleRegistry(redis, "agent")
    assert registry.publish({"things": RuleEntry.ready(rule())}) == ["things"]
    assert registry.publish({"things": RuleEntry.ready(rule())}) == []
    entry = RuleRegistry(redis, "agent").lookup("things")
    assert entry.state == "ready" and entry.rule == rule()
    assert registry.publish({"things": RuleEntry.ready(rule(unmatched="delete"))}) == ["things"]
    assert RuleRegistry(redis, "agent").lookup("things").rule == rule(unmatched="delete")


def test_rules_no_longer_wanted_become_gone_and_tombstones_stay(redis: fakeredis.FakeRedis) -> None:
    registry = RuleRegistry(redis, "agent")
    registry.publish({"things": RuleEntry.ready(rule()), "other": RuleEntry.pending("not projected")})
    assert registry.publish({}) == ["other", "things"]
    reader = RuleRegistry(redis, "agent")
    assert reader.lookup("things").state == "gone" and reader.lookup("other").state == "gone"
    assert registry.publish({}) == []


def test_an_unknown_rule_is_pending_never_gone(redis: fakeredis.FakeRedis) -> None:
    assert RuleRegistry(redis, "agent").lookup("never-published").state == "pending"


def test_a_wiped_registry_is_written_again_on_the_next_pass(redis: fakeredis.FakeRedis) -> None:
    registry = RuleRegistry(redis, "agent")
    registry.publish({"things": RuleEntry.ready(rule())})
    redis.flushall()
    assert registry.publish({"things": RuleEntry.ready(rule())}) == ["things"]
    assert RuleRegistry(redis, "agent").lookup("things").state == "ready"


def test_a_rule_another_process_marked_gone_is_published_again_on_the_next_pass(
    redis: fakeredis.FakeRedis,
) -> None:
    """E.g. an edge config's release retires the per-type rule while the watcher still wants it."""
    registry = RuleRegistry(redis, "agent")
    registry.publish({"things": RuleEntry.ready(rule())})
    RuleRegistry(redis, "agent").mark_gone("things")
    assert registry.publish({"things": RuleEntry.ready(rule())}) == ["things"]
    assert RuleRegistry(redis, "agent").lookup("things").state == "ready"
    assert registry.publish({"things": RuleEntry.ready(rule())}) == [], "then nothing to write"


def test_a_pending_or_unknown_rule_sends_the_key_back_instead_of_dropping_it(
    redis: fakeredis.FakeRedis,
) -> None:
    registry = RuleRegistry(redis, "agent")
    with pytest.raises(TransientError, match="not ready"):
        worker(registry, redis).sync(KEY)  # unknown: the watcher has not published it yet
    registry.publish({"things": RuleEntry.pending("not projected yet")})
    with pytest.raises(TransientError, match="not projected yet"):
        worker(registry, redis).sync(KEY)


def test_workers_always_see_the_current_rule(redis: fakeredis.FakeRedis) -> None:
    writer, reader = RuleRegistry(redis, "agent"), RuleRegistry(redis, "agent")
    writer.publish({"things": RuleEntry.pending("not projected yet")})
    assert reader.lookup("things").state == "pending"
    writer.publish({"things": RuleEntry.ready(rule())})
    assert reader.lookup("things").rule == rule()
    writer.publish({"things": RuleEntry.ready(rule(unmatched="delete"))})
    assert reader.lookup("things").rule == rule(unmatched="delete")  # a changed rule is seen at once
    writer.mark_gone("things")
    assert reader.lookup("things").state == "gone"


def test_a_gone_rule_ends_its_keys_quietly(redis: fakeredis.FakeRedis) -> None:
    registry = RuleRegistry(redis, "agent")
    registry.publish({"things": RuleEntry.ready(rule())})
    registry.publish({})
    worker(registry, redis).sync(KEY)  # no exception, no API call: the key ends


def test_a_tasks_first_lookup_takes_the_entry_its_claim_read_and_later_ones_read_redis(
    redis: fakeredis.FakeRedis,
) -> None:
    registry = RuleRegistry(redis, "agent")
    registry.publish({"things": RuleEntry.ready(rule())})
    claimed = redis.hget(registry.key, "things")
    assert isinstance(claimed, bytes)
    registry.mark_gone("things")  # e.g. released right after the claim
    with ruleentries.delivered("things", claimed.decode()):
        assert registry.lookup("other").state == "pending", "another rule's lookup reads Redis"
        assert registry.lookup("things").state == "ready", "the first lookup costs no round trip"
        assert registry.lookup("things").state == "gone", "a later one reads Redis"
    with ruleentries.delivered("things", ""):
        assert registry.lookup("things") == UNKNOWN, "the claim found no entry: pending, never gone"
    assert registry.lookup("things").state == "gone"


def test_the_claim_reads_the_entry_of_the_keys_rule_in_the_same_round_trip() -> None:
    redis = fakeredis.FakeRedis()
    settings = load_settings(agent_name="agent")
    queue = QueueService(redis, settings, lambda messages, together=False: None).queues["sync"]
    RuleRegistry(redis, "agent").publish({"things": RuleEntry.ready(rule())})
    other = ObjectKey("sync", "unknown-rule", "c1", "default", "a")
    queue.add(KEY)
    queue.add(other)
    taken = queue.take(KEY, "t")
    assert RuleEntry.model_validate_json(taken.rule_entry).rule == rule()
    assert queue.take(other, "t").rule_entry == ""


def test_a_gone_rule_ends_its_engine_keys_at_the_claim_but_never_a_control_key_of_the_same_name(
    redis: fakeredis.FakeRedis,
) -> None:
    """A deleted PublishedResource's rule is marked gone by the watcher, maybe before the projection
    key that must release its objects is claimed; that key's rule part is the same name, and it runs."""
    service = QueueService(redis, load_settings(agent_name="agent"), lambda messages, together=False: None)
    RuleRegistry(redis, "agent").mark_gone("things")
    control = ObjectKey("control-thing", "things", "service", "", "things")
    service.add_many([KEY, control])
    assert service.queue_for(KEY).take(KEY, "t").claim.value == "gone"
    taken = service.queue_for(control).take(control, "t")
    assert (taken.claim.value, taken.rule_entry) == ("claimed", "")


def test_a_verb_is_registered_once_with_one_queue_and_one_meaning_of_its_rule_part() -> None:
    register_verb(SYNC, "sync", names_rule=True)  # the same registration again is fine
    with pytest.raises(ValueError, match=re.escape("already registered (queue 'sync', names_rule=True)")):
        register_verb(SYNC, "sync")
    with pytest.raises(ValueError, match="already registered"):
        register_verb(SYNC, "status", names_rule=True)


def test_a_release_waits_for_runs_of_its_rule_that_claimed_it_ready(redis: fakeredis.FakeRedis) -> None:
    """A run whose claim found the rule ready may still add its finalizer, so the release (which
    marks the rule gone at once) comes back until no sync or related key of the rule is leased."""
    settings = load_settings(agent_name="agent")
    service = QueueService(redis, settings, lambda messages, together=False: None)
    registry = RuleRegistry(redis, "agent")
    registry.publish({"things": RuleEntry.ready(rule()), "other": RuleEntry.ready(rule("other"))})
    other = ObjectKey(SYNC, "other", "c1", "default", "a")
    status = ObjectKey(STATUS, "things", "c1", "default", "a")
    service.add_many([KEY, other, status])
    for key in (KEY, other, status):
        assert service.queue_for(key).take(key, "t").claim.value == "claimed"
    assert rules_with_leases(redis, "agent", (SYNC, RELATED)) == {"things", "other"}, "status keys add none"
    with pytest.raises(RequeueAfter):
        worker(registry, redis).release(rule())
    assert registry.lookup("things").state == "gone", "marked gone first: no new run starts"
    late = ObjectKey(SYNC, "things", "c1", "default", "b")
    service.add(late)
    assert service.queue_for(late).take(late, "late").claim.value == "gone", "it ends, unleased"
    assert rules_with_leases(redis, "agent", (SYNC, RELATED)) == {"things", "other"}
    service.queue_for(KEY).done(KEY, "t", Outcome.OK)
    assert rules_with_leases(redis, "agent", (SYNC, RELATED)) == {"other"}
    with pytest.raises(AssertionError, match="no API call expected"):
        worker(registry, redis).release(rule())  # no run left: it goes on to the source objects


def test_a_completed_release_is_recorded_until_the_watcher_publishes_the_rule_again(
    redis: fakeredis.FakeRedis,
) -> None:
    registry = RuleRegistry(redis, "agent")
    registry.publish({"things": RuleEntry.ready(rule())})
    registry.publish({})  # the watcher: gone, not released yet
    assert registry.lookup("things").state == "gone" and not registry.released("things")
    worker(registry, redis, NoSourceObjects()).release(rule())
    assert registry.released("things")
    registry.publish({"things": RuleEntry.ready(rule())})  # enabled again
    assert registry.lookup("things").state == "ready" and not registry.released("things")


def test_quiesce_marks_every_rule_gone_before_it_waits_for_any(redis: fakeredis.FakeRedis) -> None:
    """A task releasing several rules (a deleted Cluster) quiesces them all first: a retry while one
    rule's run ends redoes no release, and no new run of the others starts meanwhile."""
    settings = load_settings(agent_name="agent")
    service = QueueService(redis, settings, lambda messages, together=False: None)
    registry = RuleRegistry(redis, "agent")
    registry.publish({"things": RuleEntry.ready(rule()), "other": RuleEntry.ready(rule("other"))})
    other = ObjectKey(SYNC, "other", "c1", "default", "a")
    service.add(other)
    assert service.queue_for(other).take(other, "t").claim.value == "claimed"
    with pytest.raises(RequeueAfter):
        worker(registry, redis).quiesce([rule(), rule("other")])
    assert {registry.lookup(n).state for n in ("things", "other")} == {"gone"}
    service.queue_for(other).done(other, "t", Outcome.OK)
    worker(registry, redis).quiesce([rule(), rule("other")])  # nothing runs: it returns


def test_a_gone_entry_keeps_the_last_ready_rule_through_pending_for_its_release(
    redis: fakeredis.FakeRedis,
) -> None:
    """A Cluster that goes NotReady (pending), then is deleted (gone): its rule is still known, so the
    finalizers it put on source objects can be released."""
    registry = RuleRegistry(redis, "agent")
    registry.publish({"things": RuleEntry.ready(rule())})
    assert registry.publish({"things": RuleEntry.pending("cluster not ready")}) == ["things"]
    assert registry.publish({"things": RuleEntry.pending("cluster not ready")}) == []  # no rewrite
    pending = RuleRegistry(redis, "agent").lookup("things")
    assert pending.state == "pending" and pending.rule == rule()
    registry.publish({})
    assert RuleRegistry(redis, "agent").unreleased() == ["things"]
    assert RuleRegistry(redis, "agent").lookup("things").rule == rule()


def test_a_release_key_releases_a_gone_rule_once_and_never_a_rule_that_came_back(
    redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = RuleRegistry(redis, "agent")
    key = ObjectKey("release", "things", "agent", "", "things")
    registry.publish({"things": RuleEntry.ready(rule())})
    assert worker(registry, redis).release_gone(key) == 0  # ready: nothing to release (no API call)
    registry.publish({})
    with pytest.raises(RequeueAfter):  # gone a moment ago: it may come back (a config replaced)
        worker(registry, redis).release_gone(key)
    monkeypatch.setattr(worker_module, "RELEASE_GRACE", 0.0)
    worker(registry, redis, NoSourceObjects()).release_gone(key)
    assert registry.released("things") and registry.unreleased() == []
    assert registry.lookup("things").rule == rule()  # the released tombstone still says what it was
    assert worker(registry, redis).release_gone(key) == 0  # released already: no API call


def test_a_release_never_marks_released_a_rule_the_watcher_published_again_meanwhile(
    redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher publishes the rule ready while its release runs: the rule stays ready."""
    registry = RuleRegistry(redis, "agent")
    watcher = RuleRegistry(redis, "agent")
    watcher.publish({"things": RuleEntry.ready(rule())})
    watcher.publish({})
    monkeypatch.setattr(worker_module, "RELEASE_GRACE", 0.0)

    class BackMeanwhile(NoSourceObjects):
        def everywhere(self, endpoint: str) -> list[object]:
            watcher.publish({"things": RuleEntry.ready(rule())})  # during the release
            return []

    worker(registry, redis, BackMeanwhile()).release_gone(
        ObjectKey("release", "things", "agent", "", "things")
    )
    entry = RuleRegistry(redis, "agent").lookup("things")
    assert entry.state == "ready" and entry.rule == rule()
