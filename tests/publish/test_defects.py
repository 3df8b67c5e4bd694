"""Publish-mode defects found on a live stack (issue 9), each reproduced end to end: objects created
right after a PublishedResource becomes ready, and two workspaces whose objects map to one local name."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from syncflow.config import load_settings
from syncflow.modes.publish import tasks as publish_tasks  # noqa: F401  (registers the publish verbs)
from syncflow.queue.service import QueueService
from tests.support.publish_env import Published, PublishEnv, cluster_of, ok
from tests.support.waiting import wait_for

OBJECTS_PER_TEAM = 100


def _queue(env: PublishEnv) -> QueueService:
    settings = load_settings(agent_name=env.agent_name, redis_url=env.agent.env["SYNCFLOW_REDIS_URL"])
    return QueueService(env.redis, settings, lambda messages, together=False: None)


def test_objects_created_as_a_publishedresource_becomes_ready_all_sync(publish_env: PublishEnv) -> None:
    env = publish_env
    env.agent.start(
        "worker-burst",
        "worker",
        "-c",
        "2",
        "-n",
        f"burst-{env.agent_name}@%h",
        "-I",
        "syncflow.modes.publish.tasks",
    )
    try:
        g = Published(
            env, "burst", "burst.example.com", "bursts", "Burst"
        )  # returns once kcp serves the type
        names = [(team, f"b-{i}") for team in ("team-1", "team-2") for i in range(OBJECTS_PER_TEAM)]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda item: g.create(item[0], item[1], {"n": item[1]}), names))
        clusters = {team: cluster_of(env, team) for team in ("team-1", "team-2")}

        def missing() -> list[str]:
            copies = {
                (c["metadata"]["labels"]["syncagent.kcp.io/remote-object-cluster"], c["spec"]["n"])
                for c in g.local_list()
            }
            return [f"{team}/{name}" for team, name in names if (clusters[team], name) not in copies]

        wait_for(
            lambda: not missing(),
            timeout=120,
            what=lambda: f"every copy; missing {missing()[:10]}…\n{env.agent.logs()}",
        )
    finally:
        env.agent.kill("worker-burst")


def test_same_local_name_from_two_workspaces_is_a_collision_not_a_takeover(publish_env: PublishEnv) -> None:
    env = publish_env
    g = Published(
        env,
        "clash",
        "clash.example.com",
        "clashes",
        "Clash",
        naming={"namespace": "clash", "name": "{{ .Object.metadata.name }}"},  # leaves the cluster out
    )
    one, two = cluster_of(env, "team-1"), cluster_of(env, "team-2")
    g.create("team-1", "same", {"owner": "team-1"})
    g.wait_copy(one, "same")
    g.create("team-2", "same", {"owner": "team-2"})
    key = f"sync/clash/{two}/default/same"
    queue = _queue(env)
    failure = wait_for(
        lambda: queue.failure(key) if queue.queues["sync"].is_parked(key) else None,
        timeout=60,
        what=lambda: f"{key} to be parked\n{env.agent.logs()}",
    )
    assert f"name collision with {one}/default/same" in failure.error["error"]
    team2 = env.workspace("root:org:team-2")
    events = team2.get("/api/v1/namespaces/default/events").get("items") or []
    assert any(e["reason"] == "NameCollision" and e["involvedObject"]["name"] == "same" for e in events)
    copy = g.copy_of(one, "same")
    assert copy is not None and copy["spec"] == {"owner": "team-1"}, "team-2 took over team-1's copy"
    assert g.copy_of(two, "same") is None
    # deleting team-2's object must not delete the copy team-1 uses
    team2.delete(g.kcp_path(name="same"))
    wait_for(
        lambda: not ok(team2, g.kcp_path(name="same")),
        timeout=60,
        what=lambda: f"team-2's object to go\n{env.agent.logs()}",
    )
    copy = g.copy_of(one, "same")
    assert copy is not None and copy["spec"] == {"owner": "team-1"}


def test_a_key_a_workspace_refused_is_retried_when_its_binding_accepts_the_claim(
    publish_env: PublishEnv,
) -> None:
    """A namespace filter needs the namespaces claim: a workspace that has not accepted it answers 403, the
    key parks with cause forbidden:<cluster>, and accepting the claim in the APIBinding retries it at once."""
    env = publish_env
    g = Published(
        env,
        "claims",
        "claims.example.com",
        "claims",
        "Claim",
        filter={"namespace": {"matchLabels": {"sync": "yes"}}},
    )
    env.kcp_org.create("/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "team-late"}})
    team = env.workspace("root:org:team-late")
    binding = {"reference": {"export": {"path": "root:org", "name": "services"}}, "permissionClaims": []}
    team.create("/apis/apis.kcp.io/v1alpha1/apibindings", {"metadata": {"name": "services"}, "spec": binding})
    wait_for(lambda: ok(team, g.kcp_path()), timeout=30, what="the type served in team-late")
    team.merge_patch("/api/v1/namespaces/default", {"metadata": {"labels": {"sync": "yes"}}})
    team.create(
        g.kcp_path(),
        {"apiVersion": f"{g.group}/v1", "kind": g.kind, "metadata": {"name": "late"}, "spec": {}},
    )
    cluster = cluster_of(env, "team-late")
    key = f"sync/claims/{cluster}/default/late"
    failure = wait_for(
        lambda: env.parked(key), timeout=60, what=lambda: f"{key} parked for the claim\n{env.agent.logs()}"
    )
    assert failure["cause"] == f"forbidden:{cluster}" and "403" in failure["error"]
    binding["permissionClaims"] = [{"group": "", "resource": "namespaces", "all": True, "state": "Accepted"}]
    current = team.get("/apis/apis.kcp.io/v1alpha1/apibindings/services")
    team.merge_patch(
        "/apis/apis.kcp.io/v1alpha1/apibindings/services",
        {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]}, "spec": binding},
    )
    g.wait_copy(cluster, "late", timeout=30)
    assert env.parked(key) is None


def test_a_name_that_can_never_be_valid_parks_at_once(publish_env: PublishEnv) -> None:
    """An invalid rendered name is a permanent error on the first attempt, not 15 retries."""
    env = publish_env
    g = Published(
        env,
        "badname",
        "badname.example.com",
        "badnames",
        "Badname",
        naming={"namespace": "badnames", "name": "{{ .Object.metadata.name }}-UPPER"},
    )
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "x", {})
    key = f"sync/badname/{cluster}/default/x"
    failure = wait_for(lambda: env.parked(key), timeout=60, what=lambda: f"{key} parked\n{env.agent.logs()}")
    # parked at once: one run (two when a watch event arrived during the first, which requeues it)
    assert failure["attempts"] <= 2
    assert "not a valid object name" in failure["error"] and "x-UPPER" in failure["error"]
