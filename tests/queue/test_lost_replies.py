"""Lease scripts whose reply is lost after Redis ran them are sent again (real Redis, through a proxy
that holds the reply back and then cuts the connection; the client is configured as syncflow's)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar
from urllib.parse import urlsplit

import pytest
from redis import Redis

from syncflow.config import load_settings
from syncflow.queue.keys import ObjectKey
from syncflow.queue.redisclient import connect_redis
from syncflow.queue.scripts import Scripts
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Claim, Lane, Outcome, RunEnd, WorkQueue
from tests.queue.conftest import Sent, delete_agent_keys
from tests.support.proxy import TcpProxy, tcp_proxy
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for

KEY = ObjectKey("sync", "certs", "root:org:team", "default", "web")
T = TypeVar("T")


@pytest.fixture
def direct() -> Iterator[QueueService]:
    """The queue service of a fresh agent, straight on the session's real Redis."""
    redis = Redis.from_url(session_redis_url())
    agent = f"t{uuid.uuid4().hex[:10]}"
    yield QueueService(redis, load_settings(agent_name=agent), Sent())
    delete_agent_keys(redis, agent)
    redis.close()


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    with tcp_proxy(session_redis_url()) as running:
        yield running


@pytest.fixture
def proxied(direct: QueueService, proxy: TcpProxy) -> Iterator[WorkQueue]:
    """The same agent's sync queue through the proxy, on a client built as the workers build theirs."""
    redis = connect_redis(proxy.url + urlsplit(session_redis_url()).path, socket_timeout=5)
    scripts = Scripts.register(redis)
    for field in dataclasses.fields(scripts):  # loaded now: a NOSCRIPT reply must not be the one held
        redis.script_load(getattr(scripts, field.name).script)
    yield WorkQueue(redis, scripts, direct.settings, "sync")
    redis.close()


def reply_lost(proxy: TcpProxy, send: Callable[[], T], ran: Callable[[], bool]) -> T:
    """``send()`` with its reply held back until ``ran()`` says Redis ran it, then lost with its
    connection; returns what ``send`` returns in the end."""
    proxy.hold_replies()
    with ThreadPoolExecutor(1) as pool:
        sending = pool.submit(send)
        wait_for(ran, what="the script to run in Redis")
        proxy.cut()
        proxy.resume()
        return sending.result(timeout=30)


def test_a_claim_whose_reply_is_lost_is_sent_again_and_keeps_the_lease_it_took(
    direct: QueueService, proxy: TcpProxy, proxied: WorkQueue
) -> None:
    """Before, the claim raised: the key stayed leased by a run that never started, until the lease
    expired as a strike (and a client that retries by itself got "busy" for its own lease)."""
    queue = direct.queues["sync"]
    direct.add(KEY)
    taken = reply_lost(proxy, lambda: proxied.take(KEY, "task#run"), lambda: queue.owner(KEY) is not None)
    assert taken.claim is Claim.CLAIMED
    assert queue.owner(KEY) == "task#run"
    counters = queue.counters()
    assert counters.get("reclaimed") == 1 and counters.get("busy", 0) == 0


def test_a_done_whose_reply_is_lost_is_sent_again_and_changes_nothing_more(
    direct: QueueService, proxy: TcpProxy, proxied: WorkQueue
) -> None:
    queue = direct.queues["sync"]
    direct.add(KEY)
    assert queue.claim(KEY, "task#run") is Claim.CLAIMED
    end = RunEnd(Outcome.TRANSIENT, error='{"error": "x"}')
    result = reply_lost(proxy, lambda: proxied.finish(KEY, "task#run", end), lambda: queue.owner(KEY) is None)
    assert result.state == "lost", "the first send's answer is gone; the second finds no lease"
    assert result.lane is Lane.EVENT, "whether the first requeued the key is unknown: a message, in case"
    failure = queue.failure(KEY)
    assert failure is not None and failure.attempts == 1, "the failure is recorded once"
    assert queue.stats().delayed == 1 and queue.stats().leased == 0


def test_a_lost_done_reply_still_gets_the_requeued_key_its_message(
    direct: QueueService, proxy: TcpProxy, proxied: WorkQueue
) -> None:
    """An event came while the key ran, so the first send requeued it and answered with the lane to
    publish on; that answer is lost, and the second send finds no lease. The message must still go
    out, or the key would wait for the pump's grace (60 s)."""
    queue = direct.queues["sync"]
    direct.add(KEY)
    assert queue.claim(KEY, "task#run") is Claim.CLAIMED
    assert direct.add(KEY) is False, "an event while the key runs: no message now, a requeue at its done"
    end = RunEnd(Outcome.OK)
    result = reply_lost(proxy, lambda: proxied.finish(KEY, "task#run", end), lambda: queue.owner(KEY) is None)
    assert (result.state, result.lane) == ("lost", Lane.EVENT)
    stats = queue.stats()
    assert (stats.pending, stats.leased) == (1, 0), "requeued once, by the first send"
    assert queue.claim(KEY, "task#next") is Claim.CLAIMED, "the message the result asks for finds it"
