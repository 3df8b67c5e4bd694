"""Integration: real Redis, real Celery prefork workers (2 processes) and beat, as subprocesses."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections.abc import Callable

import pytest

from syncflow.queue.beat import WAITING_LIMIT
from syncflow.queue.keys import ObjectKey
from syncflow.tasks import create_app
from tests.queue import handlers  # noqa: F401  (registers the test verbs in this process too)
from tests.queue.conftest import RedisServer
from tests.queue.live import Live, assert_never_overlaps
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration


def test_event_storm_never_overlaps_a_key_and_processes_every_last_add(
    make_live: Callable[..., Live],
) -> None:
    live = make_live()
    live.redis.set(live.data("delay"), 0.01)
    live.processes.worker()
    live.processes.beat()
    keys = [ObjectKey("rec", "storm", "root:ws", "default", f"obj-{i}") for i in range(50)]
    rng = random.Random(3)
    for _ in range(1000):
        live.event(rng.choice(keys))

    wait_for(
        lambda: all(live.caught_up(k) for k in keys) and live.idle(), timeout=90, what="all keys processed"
    )
    total_runs = 0
    for key in keys:
        assert_never_overlaps(live, key)
        total_runs += len(live.runs(key))
    assert total_runs < 1000, "adds of a key that is already queued must be merged"


def accepted_task_pid(live: Live, key: ObjectKey) -> int | None:
    """The pool process that the worker knows runs ``key`` (so that its loss is detected)."""
    replies = create_app(live.settings).control.inspect(timeout=1, limit=1).active() or {}
    running = [t for tasks in replies.values() for t in tasks if str(key) in t["args"]]
    return next((t["worker_pid"] for t in running if t.get("worker_pid")), None)


def test_sigkill_of_a_pool_process_completes_every_key(make_live: Callable[..., Live]) -> None:
    live = make_live()
    live.redis.set(live.data("delay"), 0.5)
    worker = live.processes.worker()
    live.processes.beat()
    keys = [ObjectKey("rec", "crash", "root:ws", "default", f"obj-{i}") for i in range(6)]
    victim = keys[0]
    live.redis.set(live.data(f"delay:{victim}"), 1.5)  # below the 2 s time limit
    for key in keys:
        live.event(key)

    child = wait_for(lambda: accepted_task_pid(live, victim), timeout=30, what="the victim's message")
    assert child != worker.pid
    # its message may carry other keys first: kill during the victim's run, while it holds the lease
    wait_for(lambda: any(r.end is None for r in live.runs(victim)), timeout=30, what="the victim's run")
    kill_and_finish(live, child, keys)
    assert worker.poll() is None


def kill_and_finish(live: Live, child: int, keys: list[ObjectKey]) -> None:
    """SIGKILL the pool process ``child``; then every key completes, no two runs of a key overlap, and
    the killed run's lease ran out (the pump requeued its key)."""
    os.kill(child, signal.SIGKILL)
    killed_at = time.time_ns()
    wait_for(
        lambda: all(live.caught_up(k) for k in keys) and live.idle(), timeout=60, what="all keys processed"
    )
    for key in keys:
        assert_never_overlaps(live, key, killed_at)
    assert live.service.queues["sync"].counters().get("expired", 0) >= 1


def test_sigkill_in_the_middle_of_a_message_completes_every_key_it_carried(
    make_live: Callable[..., Live],
) -> None:
    live = make_live()
    live.processes.worker()
    live.processes.beat()
    keys = [ObjectKey("rec", "crash-message", "root:ws", "default", f"obj-{i}") for i in range(4)]
    victim = keys[1]
    live.redis.set(live.data(f"delay:{victim}"), 1.5)  # below the 2 s time limit
    for key in keys:
        live.redis.incr(live.data(f"ver:{key}"))
    live.service.add_many(keys)  # one message carries the four keys

    child = wait_for(lambda: accepted_task_pid(live, victim), timeout=30, what="the message to be running")
    wait_for(lambda: any(r.end is None for r in live.runs(victim)), timeout=30, what="the victim's run")
    kill_and_finish(live, child, keys)
    assert len(live.runs(keys[0])) == 1, "the key done before the kill is not run again"


def test_a_hard_time_limit_in_a_message_backs_off_its_key_and_runs_the_others(
    make_live: Callable[..., Live],
) -> None:
    live = make_live(max_attempts=2)
    live.processes.worker()
    live.processes.beat()
    first, stuck, last = (ObjectKey("hang", "limits", "root:ws", "", n) for n in ("first", "stuck", "last"))
    live.service.add_many([first, stuck, last])  # one message: the second key hangs
    wait_for(
        lambda: attempts(live, last) >= 1 and attempts(live, stuck) >= 2,
        timeout=90,
        what=lambda: "the last key run, the stuck one retried\n" + live.processes.logs(),
    )
    queue = live.service.queues["sync"]
    assert attempts(live, first) == 1 and attempts(live, last) == 1
    failure = queue.failure(stuck)
    assert failure is not None and failure.error["type"] == "TimeLimitExceeded"
    assert not queue.is_parked(stuck) and queue.failure(first) is None and queue.failure(last) is None


def test_reject_on_worker_lost_redelivers_the_message_of_a_killed_process(
    make_live: Callable[..., Live],
) -> None:
    # Long limits: billiard may notice the dead process only after a second or more, and a time
    # limit firing first would ack the message instead (task_acks_on_timeout).
    live = make_live(task_time_limit=30, lease_ttl=40, visibility_timeout=120)
    live.redis.set(live.data("delay"), 20)
    live.processes.worker()
    key = ObjectKey("rec", "lost", "root:ws", "", "obj")
    live.event(key)
    child = wait_for(lambda: accepted_task_pid(live, key), timeout=30, what="the task to be accepted")
    # accepted is not yet claimed: killed before its claim, the redelivered run would find no lease
    wait_for(lambda: any(r.end is None for r in live.runs(key)), timeout=30, what="the key's run")
    os.kill(child, signal.SIGKILL)
    # The same message comes back and is delivered again; the dead run's lease is still live.
    wait_for(
        lambda: live.service.queues["sync"].counters().get("busy", 0) >= 1, timeout=30, what="redelivery"
    )
    assert len(live.runs(key)) == 1


def test_sigkill_of_the_whole_worker_then_another_worker_finishes(make_live: Callable[..., Live]) -> None:
    live = make_live()
    live.redis.set(live.data("delay"), 0.3)
    first = live.processes.worker("first")
    live.processes.beat()
    keys = [ObjectKey("rec", "node-loss", "root:ws", "", f"obj-{i}") for i in range(8)]
    for key in keys:
        live.event(key)
    wait_for(
        lambda: any(r.end is None for k in keys for r in live.runs(k)), timeout=30, what="a handler to run"
    )
    live.processes.kill(first)  # SIGKILL to the main process and its pool children
    killed_at = time.time_ns()
    for key in keys[:3]:
        live.event(key)  # events keep coming while no worker runs
    live.processes.worker("second")

    wait_for(
        lambda: all(live.caught_up(k) for k in keys) and live.idle(), timeout=60, what="all keys processed"
    )
    for key in keys:
        assert_never_overlaps(live, key, killed_at)


def test_permanent_error_is_listed_then_replayed_after_the_fix(make_live: Callable[..., Live]) -> None:
    live = make_live()
    live.processes.worker()
    key = ObjectKey("perm", "certs", "root:ws", "team-a", "web-tls")
    live.service.add(key)

    def listed() -> list[dict[str, object]]:
        result = live.cli("failures", "list", "--json")
        assert result.returncode == 0, result.stderr
        return [r for r in json.loads(result.stdout) if r["key"] == str(key)]

    queue = live.service.queue_for(key)
    wait_for(lambda: queue.is_parked(key), timeout=30, what="the key to be parked")
    [record] = listed()  # the CLI lists it (asked once it is parked, not polled)
    assert record["attempts"] == 1 and record["type"] == "PermanentError"
    assert "dependency of web-tls is missing" in str(record["error"])
    assert live.redis.get(live.data(f"attempts:{key}")) == b"1"  # parked: not retried
    shown = live.cli("failures", "show", str(key))
    assert shown.returncode == 0 and "Traceback" in shown.stdout

    live.redis.set(live.data(f"fixed:{key}"), 1)  # an operator fixes the cause
    replayed = live.cli("failures", "replay", str(key))
    assert replayed.returncode == 0, replayed.stderr
    wait_for(lambda: live.redis.get(live.data(f"ok:{key}")) == b"1", timeout=30, what="the replayed run")
    assert listed() == []
    missing = live.cli("failures", "replay", str(key))
    assert missing.returncode != 0 and "not parked" in missing.stderr


def test_redis_restarted_empty_reports_empty_and_accepts_new_work(
    make_live: Callable[..., Live], redis_server: RedisServer
) -> None:
    live = make_live(redis_url=redis_server.url)
    live.processes.worker()
    live.processes.beat()
    before = ObjectKey("rec", "restart", "root:ws", "", "before")
    live.event(before)
    wait_for(lambda: live.caught_up(before), timeout=30, what="the first key")

    redis_server.kill()
    redis_server.start()  # same port, no data: every queue structure and message is gone
    status = live.cli("queue", "--json")
    assert status.returncode == 0, status.stderr
    snapshot = json.loads(status.stdout)
    assert all(
        q["dirty"] == q["pending"] == q["leased"] == q["delayed"] == q["parked"] == 0
        for q in snapshot["queues"]
    )
    assert [snapshot["messages"][q] for q in ("sync", "sync-bulk", "status")] == [0, 0, 0]

    # kombu can end the worker's consumer on a broker restart ("Unrecoverable error" while restoring
    # unacked messages); in production the process supervisor restarts it, as this second worker does.
    live.processes.worker("worker-after-restart")
    after = ObjectKey("rec", "restart", "root:ws", "", "after")
    live.event(after)
    live.event(before)  # what the watch's relist does: add every key again
    wait_for(
        lambda: live.caught_up(after) and live.caught_up(before), timeout=60, what="work after the restart"
    )


def attempts(live: Live, key: ObjectKey) -> int:
    return int(live.redis.get(live.data(f"attempts:{key}")) or 0)


def test_a_key_that_hits_the_hard_time_limit_backs_off_and_never_parks(
    make_live: Callable[..., Live],
) -> None:
    # Each of the four runs lasts the whole time limit: keep it short. The lease keeps its 3 s, so the
    # released lease has as long as before to be let go before it could expire.
    live = make_live(max_attempts=2, task_time_limit=1)
    live.processes.worker()
    live.processes.beat()
    key = ObjectKey("hang", "limits", "root:ws", "", "stuck")
    live.service.add(key)
    wait_for(lambda: attempts(live, key) >= 4, timeout=90, what=lambda: "four runs\n" + live.processes.logs())
    queue = live.service.queues["sync"]
    assert not queue.is_parked(key), "a timeout is transient: it must never park the key"
    failure = queue.failure(key)
    assert failure is not None and failure.error["type"] == "TimeLimitExceeded"
    assert queue.counters().get("expired", 0) == 0, "the worker releases the lease at once, no expiry"


def test_a_key_that_kills_its_worker_process_every_time_is_parked(make_live: Callable[..., Live]) -> None:
    # Each strike is a lease that expires: a short lease (and so a short time limit, which must be
    # shorter) brings both strikes sooner.
    live = make_live(max_attempts=2, task_time_limit=1, lease_ttl=1.5)
    live.processes.worker()
    live.processes.beat()
    key = ObjectKey("poison", "limits", "root:ws", "", "oom")
    live.service.add(key)
    queue = live.service.queues["sync"]
    wait_for(
        lambda: queue.is_parked(key), timeout=90, what=lambda: "the key to park\n" + live.processes.logs()
    )
    failure = queue.failure(key)
    assert failure is not None and failure.error["type"] == "LeaseExpired"
    assert attempts(live, key) == 2


def test_beat_without_workers_keeps_the_periodic_queue_bounded(make_live: Callable[..., Live]) -> None:
    # Short periods add beat entries that tick many times a second (the pump alone ticks once a
    # second): the periodic queue fills and ticks are skipped within seconds, not after 15.
    live = make_live(status_period=0.2, upsync_period=0.2)
    live.processes.start("beat", "beat", "-s", str(live.processes.log_dir / "beat-schedule"), "-l", "DEBUG")
    log = live.processes.log_dir / "beat.log"

    def skipped() -> int:
        return log.read_text(errors="replace").count("beat.skipped") if log.exists() else 0

    wait_for(lambda: skipped() >= 5, timeout=60, what=lambda: "skipped ticks\n" + live.processes.logs())
    waiting = live.service.broker_backlog()["periodic"]
    assert waiting == WAITING_LIMIT, f"{waiting} periodic messages wait"
    assert "beat.paused" in log.read_text()
