"""Publish mode: a first sync starts from the object its watch event carried (issue 16), and a stale
snapshot never writes anything: the finalizer write conditional on its resourceVersion fails first."""

from __future__ import annotations

from syncflow.config import load_settings
from syncflow.kube import snapshots
from syncflow.modes.publish import tasks as publish_tasks  # noqa: F401  (registers the publish verbs)
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from syncflow.tasks import CeleryPublisher, create_app
from tests.support.publish_env import CLEANUP, Published, PublishEnv, cluster_of
from tests.support.waiting import wait_for

SHARES_PUBLISH_ENV = True  # see tests/publish/conftest.py


def _done_lines(env: PublishEnv, key: str) -> list[str]:
    """The worker's ``task.done`` lines of ``key``, in order."""
    lines = (
        line for log in sorted(env.agent.log_dir.glob("worker*.log")) for line in log.read_text().splitlines()
    )
    return [line for line in lines if "task.done" in line and key in line]


def test_a_stale_snapshot_fails_its_conditional_finalizer_write_and_changes_nothing(
    publish_env: PublishEnv,
) -> None:
    env = publish_env
    g = Published(env, "snap", "snap.example.com", "snaps", "Snap")
    cluster = cluster_of(env, "team-1")
    created = g.create("team-1", "s1", {"v": 1})  # what the watch's ADDED event carried: no finalizer
    assert CLEANUP not in (created["metadata"].get("finalizers") or [])
    g.wait_copy(cluster, "s1", check=lambda c: c["spec"].get("v") == 1)
    kcp = env.workspace("root:org:team-1")
    kcp.merge_patch(g.kcp_path(name="s1"), {"spec": {"v": 2}})
    before = g.wait_copy(cluster, "s1", check=lambda c: c["spec"].get("v") == 2)

    key = ObjectKey.parse(f"sync/snap/{cluster}/default/s1")
    settings = load_settings(agent_name=env.agent_name, redis_url=env.agent.env["SYNCFLOW_REDIS_URL"])
    service = QueueService(env.redis, settings, CeleryPublisher(create_app(settings)))
    queue = service.queues["sync"]

    def idle() -> bool:  # the v2 run is over and nothing more is queued for the key
        return not queue.held([key])

    wait_for(idle, timeout=30, what="the key to be idle")
    runs = len(_done_lines(env, str(key)))
    with snapshots.event_object("kcp", created):  # as if the watch delivered the old ADDED event now
        service.add(key)

    def stale_then_retried() -> bool:
        outcomes = [line for line in _done_lines(env, str(key))[runs:] if "outcome=" in line]
        stale = [i for i, line in enumerate(outcomes) if "outcome=transient" in line and "409" in line]
        return bool(stale) and any("outcome=ok" in line for line in outcomes[stale[0] + 1 :])

    wait_for(
        stale_then_retried,
        timeout=60,
        what=lambda: f"a 409 from the stale snapshot, then a good run of {key}\n{env.agent.logs()}",
    )
    after = g.copy_of(cluster, "s1")
    assert after is not None and after["spec"]["v"] == 2
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"], "no write at all"
