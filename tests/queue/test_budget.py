"""The shared request budget across real processes: the configured QPS holds, and requests cost a
fraction of a Redis script call each (tokens are leased in batches)."""

from __future__ import annotations

import bisect
import json
import subprocess
import sys
import time

import pytest
from redis import Redis

from syncflow.config import Settings, load_settings
from syncflow.queue.service import QueueService
from tests.queue.conftest import REAL_REDIS_URL, Sent, delete_agent_keys, unique_agent
from tests.queue.due import is_due_at, timed
from tests.support.processes import REPO
from tests.support.waiting import wait_for

QPS, BURST, PROCESSES, SECONDS = 100, 10, 3, 2.5

SPENDER = """
import json, sys, time
from redis import Redis
from syncflow.config import load_settings
from syncflow.queue.budget import RequestBudget
from syncflow.queue.scripts import Scripts

settings = load_settings(**json.loads(sys.argv[1]))
ready, go = sys.argv[2], sys.argv[3]
redis = Redis.from_url(settings.redis_url)
budget = RequestBudget(redis, Scripts.register(redis), settings)
redis.incr(ready)
deadline = time.time() + 60
while (window := redis.get(go)) is None and time.time() < deadline:
    time.sleep(0.01)
start, end = json.loads(window)
time.sleep(max(0.0, start - time.time()))
sent = []
while not sent or time.time() < end:
    budget.take("kcp")
    sent.append(time.time())
print(json.dumps({"sent": sent, "leases": budget.leases}))
"""


@pytest.mark.integration
def test_processes_spending_one_budget_never_exceed_its_rate_and_make_few_script_calls() -> None:
    """Three processes take from one budget as fast as they can. However busy the machine, together
    they never send more than the burst plus the rate allows in any window: a slow process only sends
    less (their throughput is measured by the benchmarks, not asserted here)."""
    agent = unique_agent()
    limits = {"kcp": {"qps": QPS, "burst": BURST}}
    config = json.dumps({"agent_name": agent, "redis_url": REAL_REDIS_URL, "endpoint_limits": limits})
    ready, go = f"{agent}:test-ready", f"{agent}:test-go"
    spenders = [
        subprocess.Popen(
            [sys.executable, "-c", SPENDER, config, ready, go], cwd=REPO, stdout=subprocess.PIPE, text=True
        )
        for _ in range(PROCESSES)
    ]
    try:
        with Redis.from_url(REAL_REDIS_URL) as redis:
            wait_for(lambda: int(redis.get(ready) or 0) == PROCESSES, 60, "every spender connected")
            start = time.time() + 0.2
            redis.set(go, json.dumps([start, start + SECONDS]))
        reports = [json.loads(p.communicate(timeout=SECONDS + 60)[0]) for p in spenders]
    finally:
        for process in spenders:
            process.kill()
        with Redis.from_url(REAL_REDIS_URL) as redis:
            redis.delete(ready, go)
            delete_agent_keys(redis, agent)
    sent = sorted(t for r in reports for t in r["sent"])
    assert all(r["sent"] for r in reports), "every process got requests through"
    for first, at in enumerate(sent):  # every window of one second from each request on
        in_window = bisect.bisect_left(sent, at + 1.0) - first
        assert in_window <= BURST + QPS * 1.1, f"{in_window} requests in the second from {at - start:.2f} s"
    leases = sum(r["leases"] for r in reports)
    assert leases * 4 <= len(sent), f"{leases} script calls for {len(sent)} requests"


def test_one_lease_reserves_several_tokens_in_the_shared_bucket(
    redis: Redis, settings: Settings, sent: Sent
) -> None:
    limited = load_settings(**{**settings.model_dump(), "endpoint_limits": {"kcp": {"qps": 20, "burst": 3}}})
    budget = QueueService(redis, limited, sent).budget
    burst = timed(lambda: budget.reserve("kcp", 3))
    assert burst.wait == 0  # the burst, in one call
    assert is_due_at(timed(lambda: budget.reserve("kcp", 2)), burst, 0.10), "the last of two more: 2/20 s"
    assert is_due_at(timed(lambda: budget.reserve("kcp")), burst, 0.15), "and the next one after it"


def test_tokens_a_lease_left_unspent_go_back_to_the_bucket(
    redis: Redis, settings: Settings, sent: Sent
) -> None:
    limited = load_settings(**{**settings.model_dump(), "endpoint_limits": {"kcp": {"qps": 20, "burst": 3}}})
    budget = QueueService(redis, limited, sent).budget
    burst = timed(lambda: budget.reserve("kcp", 3))
    assert burst.wait == 0  # the whole burst
    assert budget.reserve("kcp", 1, refund=3) == 0  # none of it was spent: given back, one taken now
    assert is_due_at(timed(lambda: budget.reserve("kcp", 3)), burst, 0.05), "two were left; the third: 1/20 s"
