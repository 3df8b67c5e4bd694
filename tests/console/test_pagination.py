"""Pages of a 100,000-key queue in a real Redis: each page does bounded work (at most ``limit`` items,
at most ``MAX_SCANS`` SCAN calls and as many pipelines), and following the continue tokens walks every
key exactly once. The keys go in with pipelines under the test's own agent and are removed after."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from redis import Redis

from syncflow.config import Settings
from syncflow.console import overview, pages
from syncflow.console.filters import Filters, Scope
from syncflow.console.models import ObjectPage
from syncflow.queue.layout import QueueLayout
from tests.console.conftest import delete_agent_keys
from tests.support.redis import session_redis_url

TOTAL = 100_000
PARKED_EVERY = 1000
SCANS = ("HSCAN", "ZSCAN", "SSCAN")


class CountingRedis(Redis):
    """Counts the SCAN-family calls and the pipelines sent through it."""

    scans = 0
    pipelines = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if str(args[0]).upper() in SCANS:
            self.scans += 1
        return super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        self.pipelines += 1
        return super().pipeline(transaction, shard_hint)


def key(i: int) -> str:
    return f"sync/rule-{i % 10}/root:ws-{i % 50}/ns-{i % 7}/obj-{i:06d}"


@pytest.fixture(scope="module")
def filled() -> Iterator[tuple[CountingRedis, Settings]]:
    """100,000 synced keys in K, every thousandth parked too (X) and one pending (P, D, Q)."""
    from syncflow.config import load_settings

    redis = CountingRedis.from_url(session_redis_url(), socket_timeout=30)
    settings = load_settings(agent_name=f"cpages-{uuid.uuid4().hex[:8]}")
    delete_agent_keys(redis, settings.agent_name)
    layout = QueueLayout(settings.agent_name, "sync")
    with redis.pipeline(transaction=False) as pipe:
        for start in range(0, TOTAL, 5000):
            pipe.hset(
                layout.key("K"), mapping={key(i): 1_700_000_000_000 for i in range(start, start + 5000)}
            )
            pipe.hset(
                layout.key("X"),
                mapping={key(i): 1_700_000_000_000 for i in range(start, start + 5000, PARKED_EVERY)},
            )
        pipe.zadd(layout.key("P"), {key(7): 1_700_000_000_000})
        pipe.sadd(layout.key("D"), key(7))
        pipe.hset(layout.key("Q"), key(7), 1_700_000_000_000)
        pipe.execute()
    yield redis, settings
    delete_agent_keys(redis, settings.agent_name)
    redis.close()


def walk(redis: CountingRedis, agent: str, filters: Filters, limit: int) -> Iterator[ObjectPage]:
    token: str | None = None
    while True:
        redis.scans = redis.pipelines = 0
        page = pages.list_page(redis, agent, Scope(), filters, limit, token)
        assert len(page.items) <= limit
        assert redis.scans <= pages.MAX_SCANS and redis.pipelines <= pages.MAX_SCANS
        yield page
        if page.continue_ is None:
            return
        token = page.continue_


def test_the_tokens_walk_every_key_once_with_bounded_pages(filled: tuple[CountingRedis, Settings]) -> None:
    redis, settings = filled
    seen: list[str] = []
    states: dict[str, str] = {}
    count = 0
    for page in walk(redis, settings.agent_name, Filters(), pages.MAX_LIMIT):
        count += 1
        seen += [row.key for row in page.items]
        states.update((row.key, row.state) for row in page.items)
    assert len(seen) == len(set(seen)) == TOTAL, "every key once"
    assert sum(state == "parked" for state in states.values()) == TOTAL // PARKED_EVERY
    assert states[key(7)] == "pending" and states[key(8)] == "synced"
    assert count <= TOTAL // pages.MAX_LIMIT + 40, "pages come back full but for SCAN's batch edges"


def test_a_sparse_filter_pages_with_bounded_scans(filled: tuple[CountingRedis, Settings]) -> None:
    redis, settings = filled
    filters = Filters(name="obj-0424")  # obj-042400 .. obj-042499
    found = [row.key for page in walk(redis, settings.agent_name, filters, 50) for row in page.items]
    assert sorted(found) == sorted(key(i) for i in range(42400, 42500))


def test_a_state_filter_reads_only_its_structure(filled: tuple[CountingRedis, Settings]) -> None:
    redis, settings = filled
    parked = [
        row for page in walk(redis, settings.agent_name, Filters(state="parked"), 20) for row in page.items
    ]
    assert len(parked) == TOTAL // PARKED_EVERY and {row.state for row in parked} == {"parked"}


def test_the_first_page_is_one_page_of_work(filled: tuple[CountingRedis, Settings]) -> None:
    redis, settings = filled
    page = next(walk(redis, settings.agent_name, Filters(rule="rule-3"), 50))
    assert len(page.items) == 50 and page.continue_
    assert page.scanned <= pages.MAX_SCANS * pages.SCAN_COUNT * 2


def test_the_overview_counts_100k_keys(filled: tuple[CountingRedis, Settings]) -> None:
    redis, settings = filled
    counted = overview.tally(redis, settings.agent_name, Scope())
    parked = TOTAL // PARKED_EVERY
    assert counted.totals.parked == parked and counted.totals.pending == 1
    assert counted.totals.synced == TOTAL - parked - 1
    assert not counted.partial and counted.scanned <= overview.MAX_ENTRIES
    assert len(counted.rules) == 10 and len(counted.workspaces) == 50
    assert counted.queues[0].depth == 1 and counted.queues[0].oldest_pending_seconds is not None
