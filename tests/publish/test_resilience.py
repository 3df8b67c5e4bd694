"""Publish mode under failure (issue 6): kcp unreachable, a worker SIGKILLed mid-sync, and a deleted
PublishedResource — syncflow reaches kcp only through a TCP proxy the tests can block."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from syncflow import tasks
from syncflow.config import load_settings
from syncflow.modes.publish import tasks as publish_tasks  # noqa: F401  (registers the publish verbs)
from syncflow.queue.keys import ObjectKey
from syncflow.sync.registry import RuleRegistry
from tests.support.publish_env import (
    CLEANUP,
    PUBLISHED,
    Published,
    PublishEnv,
    cluster_of,
    ok,
    publish_environment,
    readyz,
)
from tests.support.queues import failures
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PublishEnv]:
    with publish_environment(
        tmp_path_factory.mktemp("resilience"),
        kcp_through_proxy=True,
        settings={
            "SYNCFLOW_RESYNC_PERIOD": "3",
            # the keys a SIGKILLed worker leased, and the messages it held, come back after the lease
            # and the pump's grace: shorter than QUICK_AGENT's (time limit < lease, grace <= lease)
            "SYNCFLOW_TASK_TIME_LIMIT": "5",
            "SYNCFLOW_LEASE_TTL": "7",
            "SYNCFLOW_PUMP_GRACE": "5",
        },
    ) as environment:
        yield environment


def _bind(env: PublishEnv) -> None:
    """Point this process's task runtime at the agent's queue."""
    tasks.bind(load_settings(agent_name=env.agent_name, redis_url=env.agent.env["SYNCFLOW_REDIS_URL"]))


def _enqueue(env: PublishEnv, key: str) -> None:
    """Add a key as a watch event would (the same queue the agent's workers consume)."""
    _bind(env)
    tasks.runtime.service.add(ObjectKey.parse(key))


def _rule_idle(env: PublishEnv, rule: str) -> bool:
    """No key of PublishedResource ``rule`` is queued, leased or backing off (keys of other rules, e.g.
    one an earlier test's killed worker still leases, do not count)."""
    _bind(env)
    for queue in tasks.runtime.service.queues.values():
        redis, structure = queue.redis, queue.layout.key
        members = [*redis.smembers(structure("D"))]
        members += [m for zset in ("P", "L", "W") for m in redis.zrange(structure(zset), 0, -1)]
        texts = [m.decode() if isinstance(m, bytes) else str(m) for m in members]
        if any(text.split("/")[1:2] == [rule] for text in texts):
            return False
    return True


def test_kcp_unreachable_deletes_nothing_and_converges_after(env: PublishEnv) -> None:
    assert env.proxy is not None
    g = Published(env, "reach", "reach.example.com", "reaches", "Reach")
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "doomed", {"v": 1})
    g.create("team-1", "kept", {"v": 1})
    g.wait_copy(cluster, "doomed")
    g.wait_copy(cluster, "kept")
    env.proxy.block()
    try:
        team = env.workspace("root:org:team-1")  # the test itself still reaches kcp directly
        team.delete(g.kcp_path(name="doomed"))
        team.merge_patch(g.kcp_path(name="kept"), {"spec": {"v": 2}})
        key = f"sync/reach/{cluster}/default/doomed"
        _enqueue(env, key)
        failed = wait_for(
            lambda: failures(env.redis, env.agent_name, key).get(key),
            timeout=60,
            what=lambda: f"a failed (transient) sync of {key}\n{env.agent.logs()}",
        )
        assert failed["outcome"] == "transient", failed
        assert g.copy_of(cluster, "doomed") is not None, "a copy was deleted while kcp was unreachable"
        assert g.copy_of(cluster, "kept") is not None
    finally:
        env.proxy.unblock()
    wait_for(
        lambda: not ok(team, g.kcp_path(name="doomed")),
        timeout=60,
        what=lambda: f"the deletion to propagate after kcp came back\n{env.agent.logs()}",
    )
    assert g.copy_of(cluster, "doomed") is None
    g.wait_copy(cluster, "kept", check=lambda c: c["spec"] == {"v": 2}, timeout=60)


def test_worker_killed_mid_sync_converges_without_duplicates(env: PublishEnv) -> None:
    g = Published(env, "crash", "crash.example.com", "crashes", "Crash")
    cluster = cluster_of(env, "team-2")
    names = [f"obj-{i}" for i in range(30)]
    for name in names:
        g.create("team-2", name, {"n": name})
    wait_for(lambda: g.copy_of(cluster, names[0]) is not None, timeout=30, what="the first copies")
    env.agent.kill("worker")
    env.agent.start(
        "worker-2",
        "worker",
        "-c",
        "2",
        "-n",
        f"worker2-{env.agent_name}@%h",
        "-I",
        "syncflow.modes.publish.tasks",
    )
    for name in names:
        g.wait_copy(cluster, name, timeout=60)
    copies = [
        c
        for c in g.local_list()
        if c["metadata"]["labels"].get("syncagent.kcp.io/remote-object-cluster") == cluster
    ]
    assert len(copies) == len(names)
    assert len({c["metadata"]["name"] for c in copies}) == len(names)


def test_deleting_a_publishedresource_releases_its_objects(env: PublishEnv) -> None:
    g = Published(env, "retired", "retired.example.com", "retireds", "Retired")
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "held", {"v": 1})
    g.wait_copy(cluster, "held")
    team = env.workspace("root:org:team-1")
    assert CLEANUP in team.get(g.kcp_path(name="held"))["metadata"]["finalizers"]
    # the watcher may mark the rule gone before a worker claims the projection key that releases it;
    # that key runs all the same (its claim once ended it as a key of the gone rule: nothing released)
    _bind(env)
    RuleRegistry(tasks.runtime.service.redis, env.agent_name).mark_gone("retired")
    env.service.delete(f"{PUBLISHED}/retired")
    wait_for(
        lambda: CLEANUP not in (team.get(g.kcp_path(name="held"))["metadata"].get("finalizers") or []),
        timeout=60,
        what=lambda: f"the finalizer to be released\n{env.agent.logs()}",
    )
    wait_for(
        lambda: not ok(env.service, f"{PUBLISHED}/retired"), timeout=30, what="the PublishedResource to go"
    )
    team.delete(g.kcp_path(name="held"))
    assert not ok(team, g.kcp_path(name="held"))  # no finalizer left: gone at once
    assert g.copy_of(cluster, "held") is not None  # the local copy stays


def test_a_disabled_publishedresource_is_released_once_not_on_every_projection(env: PublishEnv) -> None:
    """A release records that it completed; a later projection of the still-disabled PublishedResource
    (e.g. after a CRD relist) releases nothing again, so it never marks a rule gone that the watcher
    may have published ready again meanwhile."""
    g = Published(env, "paused", "paused.example.com", "pauseds", "Paused")
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "held", {"v": 1})
    g.wait_copy(cluster, "held")
    team = env.workspace("root:org:team-1")
    env.service.merge_patch(f"{PUBLISHED}/paused", {"spec": {"synchronization": {"enabled": False}}})
    wait_for(
        lambda: CLEANUP not in (team.get(g.kcp_path(name="held"))["metadata"].get("finalizers") or []),
        timeout=60,
        what=lambda: f"the finalizer to be released\n{env.agent.logs()}",
    )
    _bind(env)
    registry = RuleRegistry(tasks.runtime.service.redis, env.agent_name)
    wait_for(lambda: registry.released("paused"), timeout=30, what="the release to be recorded")
    recorded = registry.redis.hget(registry.key, "paused")
    key = ObjectKey.parse("projection/paused/service//paused")
    service = tasks.runtime.service
    _enqueue(env, str(key))  # held from here until a run after this add has ended well
    wait_for(
        lambda: not service.held([key]) and service.failure(str(key)) is None,
        timeout=30,
        what=lambda: f"one more projection of {key}\n{env.agent.logs()}",
    )
    assert registry.redis.hget(registry.key, "paused") == recorded, (
        "the rule was released (marked gone) again"
    )


def test_periodic_resync_repairs_what_the_watcher_missed(env: PublishEnv) -> None:
    g = Published(env, "resynced", "resynced.example.com", "resynceds", "Resynced")
    cluster = cluster_of(env, "team-1")
    for name in ("drifts", "orphaned", "deleting"):
        g.create("team-1", name, {"v": 1})
        g.wait_copy(cluster, name)
    env.agent.kill("watch-a")  # from now on only the periodic resync can notice anything
    # the keys the watcher queued before it died (e.g. for the finalizer it added) must not see the
    # changes below: those are for the resync alone
    wait_for(
        lambda: _rule_idle(env, "resynced"), timeout=30, what=lambda: f"its keys idle\n{env.agent.logs()}"
    )
    team = env.workspace("root:org:team-1")
    team.merge_patch(g.kcp_path(name="drifts"), {"spec": {"v": 2}})
    team.merge_patch(g.kcp_path(name="orphaned"), {"metadata": {"finalizers": None}})
    team.delete(g.kcp_path(name="orphaned"))  # gone from kcp without syncflow seeing it
    team.delete(g.kcp_path(name="deleting"))  # held by syncflow's finalizer: the event is missed
    assert CLEANUP in team.get(g.kcp_path(name="deleting"))["metadata"]["finalizers"]
    g.create("team-1", "missing", {"v": 1})
    g.wait_copy(cluster, "drifts", check=lambda c: c["spec"] == {"v": 2}, timeout=60)
    g.wait_copy(cluster, "missing", timeout=60)
    for name in ("orphaned", "deleting"):
        wait_for(
            lambda name=name: g.copy_of(cluster, name) is None,
            timeout=60,
            what=lambda name=name: f"the copy of {name} to be deleted\n{env.agent.logs()}",
        )
    wait_for(
        lambda: not ok(team, g.kcp_path(name="deleting")),
        timeout=30,
        what=lambda: f"syncflow's finalizer on the deleted object to be released\n{env.agent.logs()}",
    )


def test_readiness_reflects_whether_the_leader_is_syncing(env: PublishEnv) -> None:
    """/readyz of the leading watcher answers 503 while its kcp watches fail, 200 again after."""
    assert env.proxy is not None
    env.agent.kill("watch-a")  # (an earlier test may have killed it already)
    port = env.agent.watcher("watch-ready")
    Published(env, "ready", "ready.example.com", "readies", "Ready")
    wait_for(
        lambda: (r := readyz(port))[0] == 200 and r[1].get("role") == "leader",
        timeout=30,
        what=lambda: f"the new watcher to lead and be ready\n{env.agent.logs()}",
    )
    env.proxy.block()
    try:
        _, body = wait_for(
            lambda: (r := readyz(port))[0] == 503 and r,
            timeout=60,
            what=lambda: f"/readyz to fail while kcp is unreachable\n{env.agent.logs()}",
        )
        assert body["role"] == "leader"
        assert any(not w["healthy"] for w in body["watches"].values())
    finally:
        env.proxy.unblock()
    wait_for(
        lambda: readyz(port)[0] == 200, timeout=90, what=lambda: f"/readyz to recover\n{env.agent.logs()}"
    )
