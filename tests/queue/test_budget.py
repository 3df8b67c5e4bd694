"""The shared request budget across real processes: the configured QPS holds, and requests cost a
fraction of a Redis script call each (tokens are leased in batches)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from redis import Redis

from syncflow.config import Settings, load_settings
from syncflow.queue.service import QueueService
from tests.queue.conftest import REAL_REDIS_URL, Sent, delete_agent_keys, unique_agent
from tests.support.processes import REPO

QPS, BURST, PROCESSES, SECONDS = 100, 10, 3, 2.5

SPENDER = """
import json, sys, time
from redis import Redis
from syncflow.config import load_settings
from syncflow.queue.budget import RequestBudget
from syncflow.queue.scripts import Scripts

settings = load_settings(**json.loads(sys.argv[1]))
redis = Redis.from_url(settings.redis_url)
budget = RequestBudget(redis, Scripts.register(redis), settings)
start, end = float(sys.argv[2]), float(sys.argv[3])
time.sleep(max(0.0, start - time.time()))
sent = []
while time.time() < end:
    budget.take("kcp")
    sent.append(time.time())
print(json.dumps({"sent": sent, "leases": budget.leases}))
"""


def test_processes_spending_one_budget_hold_its_rate_with_few_script_calls() -> None:
    agent = unique_agent()
    limits = {"kcp": {"qps": QPS, "burst": BURST}}
    config = json.dumps({"agent_name": agent, "redis_url": REAL_REDIS_URL, "endpoint_limits": limits})
    start = time.time() + 1.5  # every process has imported and connected by then
    end = start + SECONDS
    spenders = [
        subprocess.Popen(
            [sys.executable, "-c", SPENDER, config, str(start), str(end)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    try:
        reports = [json.loads(p.communicate(timeout=SECONDS + 30)[0]) for p in spenders]
    finally:
        with Redis.from_url(REAL_REDIS_URL) as redis:
            delete_agent_keys(redis, agent)
    sent = sorted(t for r in reports for t in r["sent"])
    assert all(r["sent"] for r in reports), "every process got requests through"
    # After the burst and before the end (when leased tokens go unspent), the processes together send
    # at the configured rate (within 10%).
    steady = [t for t in sent if start + 0.5 <= t < end - 0.5]
    rate = len(steady) / (SECONDS - 1.0)
    assert QPS * 0.9 <= rate <= QPS * 1.1, f"{rate:.1f} requests/s across {PROCESSES} processes"
    assert len(sent) <= BURST + QPS * (end - start) * 1.1
    leases = sum(r["leases"] for r in reports)
    assert leases * 4 <= len(sent), f"{leases} script calls for {len(sent)} requests"


def test_one_lease_reserves_several_tokens_in_the_shared_bucket(
    redis: Redis, settings: Settings, sent: Sent
) -> None:
    limited = load_settings(**{**settings.model_dump(), "endpoint_limits": {"kcp": {"qps": 20, "burst": 3}}})
    budget = QueueService(redis, limited, sent).budget
    assert budget.reserve("kcp", 3) == 0  # the burst, in one call
    assert 0.09 <= budget.reserve("kcp", 2) <= 0.11  # the last of two more is due in 2/20 s
    assert 0.13 <= budget.reserve("kcp") <= 0.16  # and the next one after it


def test_tokens_a_lease_left_unspent_go_back_to_the_bucket(
    redis: Redis, settings: Settings, sent: Sent
) -> None:
    limited = load_settings(**{**settings.model_dump(), "endpoint_limits": {"kcp": {"qps": 20, "burst": 3}}})
    budget = QueueService(redis, limited, sent).budget
    assert budget.reserve("kcp", 3) == 0  # the whole burst
    assert budget.reserve("kcp", 1, refund=3) == 0  # none of it was spent: given back, one taken now
    assert 0.04 <= budget.reserve("kcp", 3) <= 0.06  # two were left; the third is due in 1/20 s
