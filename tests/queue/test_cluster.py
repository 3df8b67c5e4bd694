"""The keyed queue on a Redis Cluster: three ``redis-server --cluster-enabled yes`` nodes made into a
cluster by ``redis-cli --cluster create``, reached through a ``redis+cluster://`` URL (the Celery
broker stays a plain Redis: kombu has no cluster transport). Every script touches keys of one slot;
the slots of one agent's queues and budgets spread over the nodes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from redis import Redis
from redis.cluster import RedisCluster

from syncflow.config import Settings, load_settings
from syncflow.kube.bookmarks import Bookmark, RedisBookmarks
from syncflow.kube.refs import ObjectRef
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import (
    KEYED_QUEUES,
    QueueLayout,
    agent_prefix,
    budget_key,
    forget_agent,
    pump_last_key,
)
from syncflow.queue.redisclient import connect_redis
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Claim, Outcome
from tests.queue import handlers  # noqa: F401  (registers the test verbs in this process too)
from tests.queue.conftest import RedisServer, Sent, unique_agent
from tests.queue.live import Live
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

NODES = 3
KEY = ObjectKey("sync", "certs", "root:org:team", "default", "web")
STATUS_KEY = ObjectKey("status", "certs", "root:org:team", "default", "web")


def _cluster_ok(port: int) -> bool:
    info = Redis(port=port, socket_timeout=2).execute_command("CLUSTER", "INFO")
    text = info.decode() if isinstance(info, bytes) else str(info)
    return "cluster_state:ok" in text


@pytest.fixture(scope="module")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh 3-node Redis Cluster (no replicas) for this module's tests (each uses its own agent);
    its URL names the first node."""
    tmp_path = tmp_path_factory.mktemp("cluster")
    missing = [tool for tool in ("redis-server", "redis-cli") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not on PATH: cannot start a local Redis Cluster")
    nodes = [RedisServer(tmp_path, cluster=True) for _ in range(NODES)]
    try:
        for node in nodes:
            node.start()
        subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in nodes), "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        wait_for(lambda: all(_cluster_ok(n.port) for n in nodes), timeout=30, what="the cluster to be ok")
        yield f"redis+cluster://127.0.0.1:{nodes[0].port}"
    finally:
        for node in nodes:
            node.kill()


@pytest.fixture
def cluster_settings(cluster_url: str) -> Settings:
    return load_settings(
        agent_name=unique_agent(),
        redis_url=cluster_url,
        broker_url=session_redis_url(),
        task_time_limit=0.5,
        lease_ttl=1,
        visibility_timeout=10,
        max_attempts=3,
    )


def test_every_queue_operation_runs_on_a_redis_cluster(cluster_settings: Settings) -> None:
    redis = connect_redis(cluster_settings.redis_url, socket_timeout=5, socket_connect_timeout=5)
    assert isinstance(redis, RedisCluster)
    sent = Sent()
    service = QueueService(redis, cluster_settings, sent)
    sync = service.queues["sync"]

    # enqueue, claim, done
    assert service.add(KEY) is True
    assert service.add_many([KEY, STATUS_KEY]) == 1  # the sync key is already pending
    assert sent == [(KEY, "sync"), (STATUS_KEY, "status")]
    assert sync.claim(KEY, "a") is Claim.CLAIMED
    assert sync.claim(KEY, "b") is Claim.BUSY
    assert sync.done(KEY, "a", Outcome.OK).state == "done"

    # park, list, replay
    service.add(KEY)
    sync.claim(KEY, "c")
    sync.done(KEY, "c", Outcome.PERMANENT, error=json.dumps({"type": "PermanentError"}), cause="dep")
    assert sync.is_parked(KEY) and service.parked_count() == 1
    assert [f.key for f in service.parked()] == [str(KEY)]
    assert service.replay(str(KEY)) is True
    assert not sync.is_parked(KEY)

    # pump: pending keys whose message the broker scan did not find are republished...
    sent.clear()
    lost = {(KEY, "sync"), (STATUS_KEY, "status")}
    wait_for(lambda: service.pump(grace=0) and lost <= set(sent), timeout=10, what="republished keys")
    # ... and a lease that expires counts as a failure: the key backs off, then is published again
    assert sync.claim(KEY, "d") is Claim.CLAIMED
    wait_for(lambda: (t := service.pump(grace=0)) is not None and t.expired >= 1, timeout=10, what="expiry")
    sent.clear()
    wait_for(lambda: service.pump(grace=0) and (KEY, "sync") in sent, timeout=10, what="the retry")
    assert sync.failure(KEY) is not None
    assert service.since_last_pump() is not None

    # the request budget, the operator views and forgetting the agent
    assert service.budget.reserve("kcp") == 0
    assert [s.queue for s in service.stats()] == ["sync", "status", "control"]
    assert service.broker_backlog()["sync"] == 0  # the broker is the plain Redis, where nothing was sent
    assert forget_agent(redis, cluster_settings.agent_name) > 0
    assert sync.stats().dirty == 0


def test_a_watch_bookmark_is_stored_in_one_transaction_on_a_cluster(cluster_settings: Settings) -> None:
    redis = connect_redis(cluster_settings.redis_url, socket_timeout=5, socket_connect_timeout=5)
    bookmarks = RedisBookmarks(redis, agent_prefix(cluster_settings.agent_name))
    ref = ObjectRef.decode("lc1//a")
    bookmarks.set("rule/v1/configmaps", "7", known=[ref])
    assert bookmarks.get("rule/v1/configmaps") == Bookmark("7", frozenset({ref}))
    bookmarks.forget("rule/v1/configmaps")
    assert bookmarks.get("rule/v1/configmaps") is None


def test_an_agents_queues_share_one_slot_and_agents_and_budgets_spread(cluster_url: str) -> None:
    redis = connect_redis(cluster_url, socket_timeout=5, socket_connect_timeout=5)
    assert isinstance(redis, RedisCluster)
    # fixed names, so the same slots every run: these hash to slots of all three nodes' ranges
    agents = ["certs", "databases", "caches", "queues", "dns", "storage"]
    queues = [[k for q in KEYED_QUEUES for k in QueueLayout(agent, q).keys] for agent in agents]
    slots = [{redis.keyslot(k) for k in keys} for keys in queues]
    assert all(len(s) == 1 for s in slots), "one agent's queue scripts see its own writes: one slot"
    assert len({redis.get_node_from_key(keys[0]).name for keys in queues}) >= 2, (
        "agents spread over the nodes"
    )
    budgets = [budget_key("certs", endpoint) for endpoint in ("kcp", "service")]
    assert {redis.keyslot(k) for k in budgets}.isdisjoint(slots[0]), "budgets leave the queues' slot"


def test_the_queue_command_reads_a_cluster(cluster_settings: Settings) -> None:
    service = QueueService(connect_redis(cluster_settings.redis_url), cluster_settings, Sent())
    service.add(KEY)
    env = {
        "SYNCFLOW_AGENT_NAME": cluster_settings.agent_name,
        "SYNCFLOW_REDIS_URL": cluster_settings.redis_url,
        "SYNCFLOW_BROKER_URL": str(cluster_settings.broker_url),
        "PATH": str(Path(sys.executable).parent),
    }
    shown = subprocess.run(
        [str(Path(sys.executable).parent / "syncflow"), "queue", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    [sync] = [q for q in json.loads(shown.stdout)["queues"] if q["queue"] == "sync"]
    assert (sync["dirty"], sync["pending"]) == (1, 1)


def test_real_workers_and_beat_keep_their_queue_on_the_cluster(
    make_live: Callable[..., Live], cluster_url: str
) -> None:
    live = make_live(redis_url=cluster_url, broker_url=session_redis_url())
    live.redis.set(live.data("delay"), 0.3)
    live.processes.worker()
    live.processes.beat()
    keys = [ObjectKey("rec", "cluster", "root:ws", "default", f"obj-{i}") for i in range(6)]
    for key in keys:
        live.event(key)
    done = lambda: all(live.caught_up(k) for k in keys) and live.idle()  # noqa: E731
    wait_for(done, timeout=60, what=lambda: "every key\n" + live.processes.logs())
    assert all(len(live.runs(k)) == 1 for k in keys)
    assert live.redis.get(pump_last_key(live.settings.agent_name)) is not None  # beat's pump ran here
