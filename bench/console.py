"""Console benchmark: one page of objects and the overview's count at 100,000 keys.

Run from the repository root: ``python -m bench.console`` (``--help`` for options). It fills one agent's
sync queue in the given Redis (default ``redis://127.0.0.1:6379/0``) with ``--keys`` synced keys, every
thousandth parked and a few pending, under an agent name of its own, removed afterwards (never the
whole database). It prints, with the load average before and after: the first page (default limit and
the maximum), a page deep in the walk, a page of a sparse name filter, a page of parked keys, the time
to walk every page, and the overview's uncached count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from collections.abc import Callable

from redis import Redis
from redis.typing import EncodableT

from syncflow.console import overview, pages
from syncflow.console.filters import Filters, Scope
from syncflow.console.models import ObjectPage
from syncflow.queue.layout import QueueLayout, agent_patterns

RUNS = 7
"""Repetitions of each page (the median is printed)."""


def key(i: int) -> str:
    return f"sync/rule-{i % 20}/root:org:ws-{i % 200}/ns-{i % 7}/object-{i:07d}"


def stamped(names: list[str], when: int) -> dict[EncodableT, EncodableT]:
    """Hash fields: each name with the time ``when``."""
    return {name: when for name in names}


def fill(redis: Redis, agent: str, keys: int) -> None:
    """``keys`` synced keys, every thousandth parked, every ten-thousandth pending (with pipelines)."""
    layout = QueueLayout(agent, "sync")
    now = int(time.time() * 1000)
    with redis.pipeline(transaction=False) as pipe:
        for start in range(0, keys, 5000):
            chunk = [key(i) for i in range(start, min(keys, start + 5000))]
            pipe.hset(layout.key("K"), mapping=stamped(chunk, now))
            parked = [name for name in chunk if int(name[-7:]) % 1000 == 0]
            if parked:
                pipe.hset(layout.key("X"), mapping=stamped(parked, now))
            pending = [name for name in chunk if int(name[-7:]) % 10_000 == 1]
            if pending:
                pipe.zadd(layout.key("P"), dict.fromkeys(pending, now))
                pipe.hset(layout.key("Q"), mapping=stamped(pending, now))
                pipe.sadd(layout.key("D"), *pending)
        pipe.execute()


def forget(redis: Redis, agent: str) -> None:
    for pattern in agent_patterns(agent):
        names = list(redis.scan_iter(match=pattern, count=1000))
        if names:
            redis.delete(*names)


def timed(action: Callable[[], object], runs: int = RUNS) -> float:
    """The median wall time of ``action`` in milliseconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--keys", type=int, default=100_000)
    args = parser.parse_args()
    redis = Redis.from_url(args.redis_url, socket_timeout=30)
    agent = f"bench-console-{uuid.uuid4().hex[:6]}"
    scope = Scope()
    try:
        load_before = os.getloadavg()
        started = time.perf_counter()
        fill(redis, agent, args.keys)
        print(f"{args.keys} keys filled in {time.perf_counter() - started:.2f} s (agent {agent})")

        def page(filters: Filters, limit: int | None = None, token: str | None = None) -> ObjectPage:
            return pages.list_page(redis, agent, scope, filters, limit, token)

        deep = None
        walked, count, started = 0, 0, time.perf_counter()
        token: str | None = None
        while True:
            listed = page(Filters(), pages.DEFAULT_LIMIT, token)
            walked += len(listed.items)
            count += 1
            if count == 1000:
                deep = token
            if listed.continue_ is None:
                break
            token = listed.continue_
        walk_s = time.perf_counter() - started
        rows = [
            ("first page, limit 50", lambda: page(Filters())),
            ("first page, limit 500", lambda: page(Filters(), pages.MAX_LIMIT)),
            ("page 1000 of the walk, limit 50", lambda: page(Filters(), pages.DEFAULT_LIMIT, deep)),
            ("sparse name filter (1 in 100,000)", lambda: page(Filters(name="object-0042424"))),
            ("parked keys, limit 50", lambda: page(Filters(state="parked"))),
            ("overview count (uncached)", lambda: overview.tally(redis, agent, scope)),
        ]
        print(f"{'what':<40}{'median ms':>12}")
        for label, action in rows:
            print(f"{label:<40}{timed(action, 3 if 'overview' in label else RUNS):>12.1f}")
        print(f"walk of every page (limit 50): {count} pages, {walked} keys, {walk_s:.1f} s")
        load_after = os.getloadavg()
        print(
            f"load average before {load_before[0]:.2f} {load_before[1]:.2f}, "
            f"after {load_after[0]:.2f} {load_after[1]:.2f}"
        )
    finally:
        forget(redis, agent)
        redis.close()


if __name__ == "__main__":
    main()
