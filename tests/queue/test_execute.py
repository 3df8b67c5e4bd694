"""The keyed task body (claim → handler → done) against the real scripts, without Celery."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException
from prometheus_client import REGISTRY
from redis import Redis

from syncflow.config import Settings
from syncflow.queue import execute
from syncflow.queue.errors import PermanentError, RequeueAfter, TransientError
from syncflow.queue.execute import help_run, out_of_time, run_keyed, run_message, run_token, task_of
from syncflow.queue.keys import ObjectKey
from syncflow.queue.renewer import LeaseRenewer
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Claim, Lane, Outcome
from syncflow.util.deadline import remaining
from tests.queue.conftest import Sent
from tests.support.waiting import wait_for

KEY = ObjectKey("sync", "rule", "root:ws", "ns", "obj")
KEYS = [ObjectKey("sync", "rule", "root:ws", "ns", f"obj-{i}") for i in range(4)]


@pytest.fixture
def renewer() -> LeaseRenewer:
    return LeaseRenewer(interval=0.05)


def done_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, object]]:
    return [r.syncflow_fields for r in caplog.records if r.getMessage() == "task.done"]  # type: ignore[attr-defined]


def test_success_logs_one_line_with_the_key(
    service: QueueService, renewer: LeaseRenewer, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[ObjectKey] = []
    service.add(KEY)
    with caplog.at_level(logging.INFO, logger="syncflow.task"):
        report = run_keyed(service, renewer, seen.append, str(KEY), "token-1")
    assert (report.outcome, report.state, report.error) == ("ok", "done", None)
    assert seen == [KEY]
    [line] = done_lines(caplog)
    assert (line["key"], line["outcome"], line["state"]) == (str(KEY), "ok", "done")


def test_duplicate_message_is_skipped(service: QueueService, renewer: LeaseRenewer) -> None:
    calls: list[ObjectKey] = []
    service.add(KEY)
    run_keyed(service, renewer, calls.append, str(KEY), "a")
    assert run_keyed(service, renewer, calls.append, str(KEY), "b").outcome == "stale"
    assert calls == [KEY]


def test_invalid_key_is_acked_without_processing(service: QueueService, renewer: LeaseRenewer) -> None:
    calls: list[ObjectKey] = []
    assert run_keyed(service, renewer, calls.append, "not a key", "a").outcome == "invalid-key"
    assert calls == []


def test_permanent_error_parks_with_traceback(
    service: QueueService, renewer: LeaseRenewer, caplog: pytest.LogCaptureFixture
) -> None:
    def handler(key: ObjectKey) -> None:
        raise ApiException(status=404, reason="namespace not found")

    service.add(KEY)
    with caplog.at_level(logging.INFO, logger="syncflow.task"):
        report = run_keyed(service, renewer, handler, str(KEY), "a")
    assert (report.outcome, report.state) == ("permanent", "parked")
    assert isinstance(report.error, ApiException)
    failure = service.failure(str(KEY))
    assert failure is not None and failure.error["type"] == "ApiException"
    assert "namespace not found" in failure.error["traceback"]
    [line] = done_lines(caplog)
    assert line["state"] == "parked" and "ApiException" in str(line["error"])


def test_transient_error_backs_off(service: QueueService, renewer: LeaseRenewer) -> None:
    def handler(key: ObjectKey) -> None:
        raise ApiException(status=409, reason="Conflict")

    service.add(KEY)
    report = run_keyed(service, renewer, handler, str(KEY), "a")
    assert (report.outcome, report.state) == ("transient", "backoff")
    assert service.queues["sync"].stats().delayed == 1


def test_requeue_after_is_not_an_error(service: QueueService, renewer: LeaseRenewer) -> None:
    def handler(key: ObjectKey) -> None:
        raise RequeueAfter(30)

    service.add(KEY)
    report = run_keyed(service, renewer, handler, str(KEY), "a")
    assert (report.outcome, report.state, report.error) == ("after", "delayed", None)
    assert service.failure(str(KEY)) is None


def test_dirtied_while_running_is_published_again(
    service: QueueService, renewer: LeaseRenewer, sent: Sent
) -> None:
    def handler(key: ObjectKey) -> None:
        service.add(key)  # a watch event arrives mid-run

    service.add(KEY)
    sent.clear()
    assert run_keyed(service, renewer, handler, str(KEY), "a").state == "requeued"
    assert sent == [(KEY, "sync")]


def test_long_handler_keeps_its_lease(service: QueueService, renewer: LeaseRenewer) -> None:
    short = service.settings.model_copy(update={"task_time_limit": 0.05, "lease_ttl": 0.15})
    service = QueueService(service.redis, short, service.publisher)
    queue = service.queues["sync"]
    release = threading.Event()

    def handler(key: ObjectKey) -> None:
        release.wait(10)

    service.add(KEY)
    runner = threading.Thread(target=run_keyed, args=(service, renewer, handler, str(KEY), "a"))
    runner.start()
    try:
        wait_for(lambda: queue.stats().leased, what="the handler to start")
        first = float(queue.redis.zscore(queue.layout.key("L"), str(KEY)) or 0)
        # Renewal pushes the deadline past the original TTL, so the lease never expires mid-run.
        wait_for(
            lambda: float(queue.redis.zscore(queue.layout.key("L"), str(KEY)) or 0) > first + 100,
            what="the lease to be renewed",
        )
        assert service.pump().expired == 0
        assert queue.claim(KEY, "intruder") is Claim.BUSY
    finally:
        release.set()
        runner.join(10)
    assert queue.stats().leased == 0


def test_a_megabyte_error_is_stored_capped_at_4_kib(service: QueueService, renewer: LeaseRenewer) -> None:
    def handler(key: ObjectKey) -> None:
        raise PermanentError("bad field: " + "x" * 1024 * 1024)

    service.add(KEY)
    run_keyed(service, renewer, handler, str(KEY), "a")
    failure = service.failure(str(KEY))
    assert failure is not None
    for part in ("error", "traceback"):
        text = failure.error[part]
        assert len(text.encode()) <= 4096 + 40 and text.rstrip().endswith(" bytes more)"), part
    assert failure.error["error"].startswith("bad field: xxx")
    assert failure.error["traceback"].startswith("Traceback (most recent call last)")
    stored = service.redis.hget(service.queues["sync"].layout.key("E"), str(KEY)) or b""
    assert len(stored) < 3 * 4096


def test_handler_requests_must_end_well_inside_the_time_limit(
    service: QueueService, renewer: LeaseRenewer
) -> None:
    left: list[float | None] = []
    service.add(KEY)
    run_keyed(service, renewer, lambda key: left.append(remaining()), str(KEY), "a")
    [seconds] = left
    limit = service.settings.task_time_limit
    assert seconds is not None and 0.7 * limit < seconds <= 0.8 * limit
    assert remaining() is None


def test_each_key_of_a_message_is_claimed_run_and_logged_on_its_own(
    service: QueueService, renewer: LeaseRenewer, caplog: pytest.LogCaptureFixture
) -> None:
    """A failing key among others fails alone: the others run, and each key has its line and state."""
    seen: list[ObjectKey] = []

    def handler(key: ObjectKey) -> None:
        seen.append(key)
        assert service.queue_for(key).owner(key) == "token-1"  # leased while it runs, not before
        assert all(service.queue_for(other).owner(other) is None for other in KEYS if other != key)
        if key == KEYS[1]:
            raise PermanentError("broken object")

    service.add_many(KEYS)
    service.add(KEYS[3])  # already pending: its message is the one the others carry
    with caplog.at_level(logging.INFO, logger="syncflow.task"):
        reports = run_message(service, renewer, handler, [str(k) for k in KEYS], "token-1", "sync")
    assert seen == KEYS
    assert [(r.outcome, r.state) for r in reports] == [("ok", "done"), ("permanent", "parked")] + [
        ("ok", "done")
    ] * 2
    assert [line["key"] for line in done_lines(caplog)] == [str(k) for k in KEYS]
    assert service.queues["sync"].stats().pending == 0 and service.queues["sync"].is_parked(KEYS[1])
    again = run_message(service, renewer, handler, [str(k) for k in KEYS], "token-2", "sync")
    assert [r.outcome for r in again] == ["stale"] * 4, "a second copy of the message runs nothing"


def test_a_message_claims_each_later_key_in_the_previous_keys_done(
    service: QueueService, renewer: LeaseRenewer
) -> None:
    """A message of n keys costs n + 1 lease round trips (one claim, then a done per key, each but the
    last also claiming the next key), not 2n; a key skipped as stale is claimed on its own."""
    queue = service.queues["sync"]
    calls: list[str] = []
    counted = {
        name: _counting(getattr(queue._scripts, name), name, calls)
        for name in ("claim", "done", "done_claim")
    }
    queue._scripts = dataclasses.replace(queue._scripts, **counted)
    service.add_many(KEYS)
    reports = run_message(service, renewer, lambda key: None, [str(k) for k in KEYS], "a", "sync")
    assert [r.outcome for r in reports] == ["ok"] * 4
    assert calls == ["claim", "done_claim", "done_claim", "done_claim", "done"]
    calls.clear()
    service.add_many(KEYS[2:])
    reports = run_message(service, renewer, lambda key: None, [str(k) for k in KEYS], "b", "sync")
    assert [r.outcome for r in reports] == ["stale", "stale", "ok", "ok"]
    assert calls == ["claim", "claim", "claim", "done_claim", "done"]


def test_a_large_message_skips_the_keys_no_longer_held_without_claiming_them(
    service: QueueService, renewer: LeaseRenewer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ``LARGE_MESSAGE`` keys, one ``held`` call finds the keys already run elsewhere: each
    is reported stale in its place, and only the others are claimed."""
    monkeypatch.setattr(execute, "SLICE", 60.0)  # a busy machine must not cut this message short
    many = [ObjectKey("sync", "rule", "root:ws", "ns", f"big-{i}") for i in range(execute.LARGE_MESSAGE + 4)]
    queue = service.queues["sync"]
    service.add_many(many)
    run_message(service, renewer, lambda key: None, [str(k) for k in many[::2]], "helper", "sync")
    calls: list[str] = []
    counted = {
        name: _counting(getattr(queue._scripts, name), name, calls)
        for name in ("claim", "done_claim", "held")
    }
    queue._scripts = dataclasses.replace(queue._scripts, **counted)
    seen: list[ObjectKey] = []
    stale_before = queue.counters().get("stale", 0)
    reports = run_message(service, renewer, seen.append, [str(k) for k in many], "pool", "sync")
    assert [r.outcome for r in reports] == ["stale", "ok"] * (len(many) // 2)
    assert queue.counters()["stale"] - stale_before == len(many) // 2, "each skipped key counts as stale"
    assert seen == many[1::2]
    assert calls[:2] == ["held", "claim"] and calls.count("claim") == 1, (
        "one claim, then each done claims the next"
    )
    assert queue.stats().pending == 0


def test_a_message_that_fails_after_claiming_its_next_key_gives_that_key_back(
    redis: Redis, settings: Settings, renewer: LeaseRenewer
) -> None:
    """The broker refuses the message for a key dirtied while it ran: the task fails, and the next
    key, already claimed by that key's done, is due again at once instead of leased until its lease
    expires (a strike)."""

    def broker_down(messages: Sequence[tuple[ObjectKey, str]], together: bool = False) -> None:
        raise ConnectionError("broker unreachable")

    service = QueueService(redis, settings, broker_down)
    queue = service.queues["sync"]
    first, second = KEYS[:2]
    queue.add_many([first, second])

    def handler(key: ObjectKey) -> None:
        queue.add(key)  # changed while it ran: its done requeues it and publishes a message

    with pytest.raises(ConnectionError):
        run_message(service, renewer, handler, [str(first), str(second)], "a", "sync")
    assert queue.owner(second) is None, "the next key's lease is released"
    stats = queue.stats()
    assert (stats.leased, stats.delayed) == (0, 1)
    assert service.failure(str(second)) is None, "no attempt, no strike"
    result = queue.pump(grace=60, verified=0)
    assert (second, Lane.EVENT) in result.publish, "the next pump publishes it"


def _counting(script: Callable[..., Any], name: str, calls: list[str]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return script(*args, **kwargs)

    return call


def test_keys_a_message_could_not_start_in_time_go_back_to_the_broker(
    service: QueueService, renewer: LeaseRenewer, sent: Sent
) -> None:
    short = service.settings.model_copy(update={"task_time_limit": 1.0})
    service = QueueService(service.redis, short, service.publisher)
    slow = threading.Event()

    def handler(key: ObjectKey) -> None:
        slow.wait(0.3)  # past START_SHARE (0.25) of the limit: the rest must not start

    service.add_many(KEYS)
    sent.clear()
    reports = run_message(service, renewer, handler, [str(k) for k in KEYS], "a", "sync-bulk")
    assert [r.outcome for r in reports] == ["ok"]
    assert sent == [(key, "sync-bulk") for key in KEYS[1:]]
    assert sent.together == [KEYS[1:]], "the rest of one message goes back as one send, together"
    assert service.queues["sync"].stats().pending == 3, "the resent keys are still pending work"
    later = run_message(service, renewer, lambda key: None, [str(k) for k in KEYS[1:]], "b", "sync-bulk")
    assert [r.outcome for r in later] == ["ok"] * 3


def test_a_large_message_starts_keys_for_a_slice_then_resends_the_rest(
    service: QueueService, renewer: LeaseRenewer, sent: Sent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change queued behind a large message waits no longer than behind a small one: past ``SLICE``
    the message's keys not started go back to the broker, still pending; a small message runs on."""
    monkeypatch.setattr(execute, "SLICE", 0.0)
    many = [ObjectKey("sync", "rule", "root:ws", "ns", f"big-{i}") for i in range(execute.LARGE_MESSAGE + 1)]
    service.add_many(many)
    sent.clear()
    reports = run_message(service, renewer, lambda key: None, [str(k) for k in many], "a", "sync-bulk")
    assert [r.outcome for r in reports] == ["ok"], "the first key always starts"
    assert sent == [(key, "sync-bulk") for key in many[1:]]
    assert sent.together == [many[1:]]
    assert service.queues["sync"].stats().pending == len(many) - 1
    small = run_message(service, renewer, lambda key: None, [str(k) for k in many[1:]], "b", "sync-bulk")
    assert [r.outcome for r in small] == ["ok"] * execute.LARGE_MESSAGE


def test_a_hard_time_limit_backs_off_the_running_key_and_resends_the_others(
    service: QueueService, sent: Sent
) -> None:
    """The worker's main process after killing a child mid-message: only the key the child held is
    released (as a transient failure); the keys done or not started get a new message."""
    queue = service.queues["sync"]
    service.add_many(KEYS)
    token = run_token("t")  # the main process knows the task id, not the run's nonce
    assert queue.claim(KEYS[0], token) is Claim.CLAIMED
    queue.done(KEYS[0], token, Outcome.OK)
    assert queue.claim(KEYS[1], token) is Claim.CLAIMED  # the child died running this one
    sent.clear()
    out_of_time(service, [str(k) for k in KEYS], "t", TimeoutError("time limit"), "sync")
    assert sorted(sent) == sorted((key, "sync") for key in (KEYS[0], *KEYS[2:]))
    failure = service.failure(str(KEYS[1]))
    assert failure is not None and failure.attempts == 1 and not queue.is_parked(KEYS[1])
    assert queue.stats().leased == 0 and queue.stats().delayed == 1
    assert queue.counters().get("lost", 0) == 0


def test_each_run_of_a_message_leases_with_a_token_of_its_own() -> None:
    """A redelivered copy of a message still running must not pass for the first run's own retried
    claim (claim.lua), so each run's token carries a nonce beside the Celery task id."""
    first, second = run_token("0b7e-task"), run_token("0b7e-task")
    assert first != second
    assert task_of(first) == task_of(second) == "0b7e-task"
    assert task_of("0b7e-task") == "0b7e-task", "a token of a worker from before the nonce"


WORKQUEUE_SAMPLES = (
    "workqueue_adds_total",
    "workqueue_queue_duration_seconds_count",
    "workqueue_work_duration_seconds_count",
    "workqueue_retries_total",
)


def workqueue_counts(name: str = "sync") -> dict[str, float]:
    """The workqueue counters and histogram counts of queue ``name`` in this process."""
    return {sample: REGISTRY.get_sample_value(sample, {"name": name}) or 0.0 for sample in WORKQUEUE_SAMPLES}


def grown(before: dict[str, float]) -> dict[str, float]:
    """How much each workqueue sample of the sync queue grew since ``before``."""
    return {sample: value - before[sample] for sample, value in workqueue_counts().items()}


def test_workqueue_metrics_count_adds_claims_runs_and_retries(
    service: QueueService, renewer: LeaseRenewer
) -> None:
    before = workqueue_counts()
    service.add(KEY)
    service.add(KEY)  # already dirty: no new add, as in client-go
    service.add(KEYS[0], bulk=True)
    assert grown(before)["workqueue_adds_total"] == 2

    def fails_once_dirtied(key: ObjectKey) -> None:
        service.add(key)  # an event while leased is an add; done requeues the key at once
        raise TransientError("later")

    report = run_keyed(service, renewer, fails_once_dirtied, str(KEY), "a")
    assert (report.outcome, report.state) == ("transient", "requeued")
    assert run_keyed(service, renewer, lambda key: None, str(KEYS[0]), "b").outcome == "ok"
    assert run_keyed(service, renewer, lambda key: None, str(KEYS[0]), "c").outcome == "stale"
    assert grown(before) == {
        "workqueue_adds_total": 3,
        "workqueue_queue_duration_seconds_count": 2,  # one wait per claim, none for a stale message
        "workqueue_work_duration_seconds_count": 2,
        "workqueue_retries_total": 1,
    }


def test_a_backoff_is_a_retry_and_parking_or_waiting_is_not(
    service: QueueService, renewer: LeaseRenewer
) -> None:
    def fails(error: Exception) -> Callable[[ObjectKey], None]:
        def handler(key: ObjectKey) -> None:
            raise error

        return handler

    before = workqueue_counts()
    for i, error in enumerate([TransientError("later"), RequeueAfter(30), PermanentError("never")]):
        service.add(KEYS[i])
        run_keyed(service, renewer, fails(error), str(KEYS[i]), f"t{i}")
    assert [service.queue_for(k).is_parked(k) for k in KEYS[:3]] == [False, False, True]
    assert grown(before)["workqueue_retries_total"] == 1
    assert service.replay(str(KEYS[2])) is True  # a replay adds the key again
    assert grown(before)["workqueue_adds_total"] == 4


def test_a_killed_run_backs_off_as_a_retry(service: QueueService) -> None:
    service.add(KEY)
    assert service.queue_for(KEY).claim(KEY, "task-1#run") is Claim.CLAIMED
    before = workqueue_counts()
    out_of_time(service, [str(KEY)], "task-1", TimeoutError("hard time limit"), "sync")
    assert grown(before)["workqueue_retries_total"] == 1


def test_a_task_helps_run_the_keys_it_queued_from_the_back(
    service: QueueService, renewer: LeaseRenewer, caplog: pytest.LogCaptureFixture, sent: Sent
) -> None:
    """``help_run``: each key runs once, here or through its message; one another process claimed
    first is skipped here, and its message is not sent again."""
    keys = [ObjectKey("sync", "rule", "root:ws", "ns", f"obj-{i}") for i in range(10)]
    ran: list[ObjectKey] = []
    lock = threading.Lock()

    def handler(key: ObjectKey) -> None:
        with lock:
            ran.append(key)

    service.add_many(keys)
    sent.clear()
    assert run_keyed(service, renewer, handler, str(keys[0]), "elsewhere").outcome == "ok"
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="syncflow.task"):
        reports = help_run(service, renewer, handler, keys, "here")
    assert sorted(r.outcome for r in reports) == ["ok"] * 9 + ["stale"]
    assert sorted(map(str, ran)) == sorted(map(str, keys)), "each key ran once"
    assert sorted(line["key"] for line in done_lines(caplog)) == sorted(map(str, keys[1:]))
    stats = service.queues["sync"].stats()
    assert (stats.pending, stats.leased, stats.dirty) == (0, 0, 0)
    assert sent == [], "no message is sent again"


def test_helping_stops_starting_keys_after_its_time(
    service: QueueService, renewer: LeaseRenewer, sent: Sent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``HELP_SECONDS`` each helper thread starts no further key: the rest stay pending with the
    messages they have, none sent again."""
    monkeypatch.setattr(execute, "HELP_SECONDS", 0.0)
    keys = [ObjectKey("sync", "rule", "root:ws", "ns", f"obj-{i}") for i in range(3 * execute.HELPERS)]
    service.add_many(keys)
    sent.clear()
    reports = help_run(service, renewer, lambda key: None, keys, "here")
    assert [r.outcome for r in reports] == ["ok"] * execute.HELPERS, "one key per helper thread"
    assert service.queues["sync"].stats().pending == len(keys) - execute.HELPERS
    assert sent == []
