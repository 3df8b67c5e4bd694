"""Integration: Redis stopped and started again under a running worker and beat (real processes)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from syncflow.queue.keys import ObjectKey
from tests.queue import handlers  # noqa: F401  (registers the test verbs in this process too)
from tests.queue.conftest import RedisServer
from tests.queue.live import Live
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

NOISE = ("AttributeError", "Message Error", "Cannot connect", "Connection to broker lost")
"""What the processes used to print while Redis was gone: Celery's errors (beat's with a stack), per
retry or per tick, and the worker's AttributeError of its gossip step."""


def lines(log: Path, event: str) -> list[str]:
    """The lines of ``log`` that are the structured event ``event``."""
    pattern = re.compile(rf"^\S+ \w+ {re.escape(event)}(\s|$)")
    return [line for line in log.read_text(errors="replace").splitlines() if pattern.match(line)]


def ticks_after(log: Path, marker: str) -> int:
    """How many beat ticks ``log`` shows after its first line containing ``marker``."""
    text = log.read_text(errors="replace")
    start = text.find(marker)
    return text.count("Sending due task", start) if start >= 0 else 0


def test_a_redis_outage_is_one_line_each_way_and_the_processes_recover_without_a_restart(
    make_live: Callable[..., Live], redis_server: RedisServer
) -> None:
    # beat then ticks several times a second (pump, status-poll, poll-tick), not once: the five ticks
    # into the outage, and the first one after it, come sooner
    live = make_live(redis_url=redis_server.url, status_period=0.5, upsync_period=0.5)
    worker, beat = live.processes.worker(), live.processes.beat()
    worker_log, beat_log = (live.processes.log_dir / f"{name}.log" for name in ("worker", "beat"))
    before = ObjectKey("rec", "outage", "root:ws", "", "before")
    live.event(before)
    wait_for(lambda: live.caught_up(before), timeout=30, what=live.processes.logs)

    redis_server.kill()
    logs = (worker_log, beat_log)
    wait_for(
        lambda: all(lines(log, "redis.unreachable") for log in logs),
        timeout=30,
        what=lambda: "redis.unreachable from worker and beat\n" + live.processes.logs(),
    )
    # beat keeps ticking (and the worker reconnecting) into the outage: still one line each
    wait_for(lambda: ticks_after(beat_log, "redis.unreachable") >= 5, timeout=30, what="beat ticks")
    for log in logs:
        [line] = lines(log, "redis.unreachable")
        assert f"url={redis_server.url} " in line and re.search(r" error=\S", line), line

    redis_server.start()  # same port, empty
    wait_for(
        lambda: all(lines(log, "redis.reachable") for log in logs),
        timeout=60,
        what=lambda: "redis.reachable from worker and beat\n" + live.processes.logs(),
    )
    after = ObjectKey("rec", "outage", "root:ws", "", "after")
    live.event(after)
    wait_for(
        lambda: live.caught_up(after),
        timeout=60,
        what=lambda: "work after the outage\n" + live.processes.logs(),
    )

    assert worker.poll() is None and beat.poll() is None, "recovered without a restart"
    for log in logs:
        assert len(lines(log, "redis.unreachable")) == 1 and len(lines(log, "redis.reachable")) == 1
        text = log.read_text(errors="replace")
        assert not [noise for noise in NOISE if noise in text], f"{log.name}:\n{text[-3000:]}"
