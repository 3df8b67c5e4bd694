"""The queue's synced record (K, docs/architecture.md §5.1): an ok run records its key, a run that found
its object or rule gone removes it, and nothing else needs a round trip."""

from __future__ import annotations

import json

from syncflow.queue import gone
from syncflow.queue.execute import run_keyed
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import registry_key
from syncflow.queue.renewer import LeaseRenewer
from syncflow.queue.service import QueueService
from tests.console.conftest import put

KEY = "sync/dbs/root:team-a/default/web"


def synced(service: QueueService, key: str) -> bool:
    return bool(service.redis.hexists(service.queues["sync"].layout.key("K"), key))


def test_an_ok_run_records_the_key_as_synced(service: QueueService) -> None:
    put(service, KEY, "synced")
    assert synced(service, KEY)
    raw = service.redis.hget(service.queues["sync"].layout.key("K"), KEY)
    assert raw is not None and int(raw) > 0, "the value is the Redis time (ms) of the run's end"


def test_a_failed_run_keeps_the_last_synced_time(service: QueueService) -> None:
    put(service, KEY, "synced")
    put(service, KEY, "parked")
    assert synced(service, KEY), "parked now, but it did sync once"


def test_a_run_that_found_its_object_gone_forgets_the_key(service: QueueService) -> None:
    put(service, KEY, "synced")
    put(service, KEY, "gone")
    assert not synced(service, KEY)


def test_a_handler_marks_its_key_gone_through_the_run(service: QueueService) -> None:
    put(service, KEY, "synced")
    service.add(ObjectKey.parse(KEY))
    report = run_keyed(service, LeaseRenewer(30), lambda key: gone.mark(), KEY, "t1#1")
    assert report.outcome == "ok"
    assert not synced(service, KEY)
    service.add(ObjectKey.parse(KEY))
    run_keyed(service, LeaseRenewer(30), lambda key: None, KEY, "t2#1")
    assert synced(service, KEY), "a later ok run records it again"


def test_a_run_may_forget_the_other_keys_of_its_object(service: QueueService) -> None:
    status = "status/dbs/root:team-a/default/web"
    put(service, KEY, "synced")
    put(service, status, "synced")
    service.add(ObjectKey.parse(KEY))
    run_keyed(service, LeaseRenewer(30), lambda key: gone.mark(status, "nonsense"), KEY, "t1#1")
    assert not synced(service, KEY)
    assert not service.redis.hexists(service.queues["status"].layout.key("K"), status)


def test_mark_outside_a_run_does_nothing() -> None:
    gone.mark()


def test_a_claim_that_finds_the_rule_gone_forgets_the_key(service: QueueService) -> None:
    put(service, KEY, "synced")
    service.redis.hset(registry_key(service.settings.agent_name), "dbs", json.dumps({"state": "gone"}))
    key = ObjectKey.parse(KEY)
    service.add(key)
    assert service.queue_for(key).take(key, "t3#1").claim.value == "gone"
    assert not synced(service, KEY)


def test_a_failed_run_records_its_task_and_the_api_status(service: QueueService) -> None:
    class ForbiddenError(Exception):
        status = 403
        reason = "Forbidden"

    def handler(key: ObjectKey) -> None:
        raise ForbiddenError("no")

    service.add(ObjectKey.parse(KEY))
    run_keyed(service, LeaseRenewer(30), handler, KEY, "task-9#1")
    failure = service.failure(KEY)
    assert failure is not None
    assert (failure.error["task"], failure.error["status"], failure.error["reason"]) == (
        "task-9",
        403,
        "Forbidden",
    )
