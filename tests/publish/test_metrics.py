"""Publish mode's metrics, end to end: watch, worker (-c 2) and beat each serve /metrics while
objects sync from two workspaces; the counters match what the test made happen."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.publish_env import (
    PUBLISHED,
    Published,
    PublishEnv,
    cluster_of,
    publish_environment,
    published,
)
from tests.support.scrape import Samples, scrape, total, value
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

RESOURCE = "gadgets.metrics.example.com"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PublishEnv]:
    with publish_environment(tmp_path_factory.mktemp("metrics"), metrics=True) as env:
        yield env


def scraped(env: PublishEnv, process: str) -> Samples:
    return scrape(env.metrics_ports[process])


def synced(env: PublishEnv, direction: str) -> float:
    samples = scraped(env, "worker")
    found = value(
        samples, "syncer_resources_synced_total", agent=env.agent_name, resource=RESOURCE, direction=direction
    )
    return found or 0.0


def test_sync_counters_rules_connections_and_queue_gauges(env: PublishEnv) -> None:
    gadgets = Published(env, "gadgets", "metrics.example.com", "gadgets", "Gadget")
    made = [("team-1", "a"), ("team-1", "b"), ("team-2", "c")]
    for team, name in made:
        gadgets.create(team, name, {"size": 1})
    copies = {name: gadgets.wait_copy(cluster_of(env, team), name) for team, name in made}
    wait_for(lambda: synced(env, "spec") >= len(made), timeout=30, what=lambda: str(scraped(env, "worker")))

    a = copies["a"]["metadata"]
    env.service.merge_patch(
        f"/apis/{gadgets.group}/v1/namespaces/{a['namespace']}/{gadgets.plural}/{a['name']}/status",
        {"status": {"phase": "Ready"}},
    )
    wait_for(lambda: synced(env, "status") == 1, timeout=30, what=lambda: str(scraped(env, "worker")))
    env.workspace("root:org:team-2").delete(gadgets.kcp_path(name="c"))
    wait_for(lambda: synced(env, "delete") == 1, timeout=30, what=lambda: str(scraped(env, "worker")))

    worker = scraped(env, "worker")
    labels = {"agent": env.agent_name}
    assert (value(worker, "syncer_sync_duration_seconds_count", **labels, resource=RESOURCE) or 0) >= len(
        made
    )
    assert value(worker, "syncer_connection_status", **labels, endpoint="kcp") == 1
    assert value(worker, "syncer_connection_status", **labels, endpoint="service") == 1
    assert (
        value(worker, "syncflow_queue_tasks_total", **labels, task="syncflow.sync", outcome="ok") or 0
    ) >= 3
    assert total(worker, "syncer_sync_errors_total", **labels, resource=RESOURCE) == 0

    watch = scraped(env, "watch-a")
    assert value(watch, "sync_agent_published_resource", **labels) == 1
    assert value(watch, "syncflow_sync_rule_ready", **labels, rule="gadgets") == 1
    assert value(watch, "syncer_connection_status", **labels, endpoint="kcp") == 1
    assert value(watch, "syncer_connection_status", **labels, endpoint="service") == 1

    for process in ("watch-a", "worker", "beat"):
        samples = scraped(env, process)
        assert value(samples, "syncflow_redis_up", **labels) == 1, process
        assert value(samples, "syncflow_queue_keys", **labels, queue="sync", state="parked") == 0, process
        assert value(samples, "syncflow_queue_messages", **labels, queue="sync-bulk") is not None, process


def test_a_pending_published_resource_is_counted_and_not_ready(env: PublishEnv) -> None:
    labels = {"agent": env.agent_name}
    env.apply(env.service, PUBLISHED, published("missing", "nowhere.example.com", "Missing"))
    wait_for(
        lambda: value(scraped(env, "watch-a"), "syncflow_sync_rule_ready", **labels, rule="missing") == 0,
        timeout=30,
        what=lambda: str(scraped(env, "watch-a")),
    )
    watch = scraped(env, "watch-a")
    rules = {dict(found)["rule"] for name, found in watch if name == "syncflow_sync_rule_ready"}
    assert value(watch, "sync_agent_published_resource", **labels) == len(rules) >= 1

    env.service.delete(f"{PUBLISHED}/missing")
    wait_for(
        lambda: value(scraped(env, "watch-a"), "syncflow_sync_rule_ready", **labels, rule="missing") is None,
        timeout=30,
        what=lambda: str(scraped(env, "watch-a")),
    )
    assert value(scraped(env, "watch-a"), "sync_agent_published_resource", **labels) == len(rules) - 1


def sync_work(env: PublishEnv) -> float:
    """Keys of the sync queue the worker's processes have released so far."""
    samples = scraped(env, "worker")
    return value(samples, "workqueue_work_duration_seconds_count", agent=env.agent_name, name="sync") or 0.0


def adds(env: PublishEnv) -> float:
    """Keys newly added to the sync queue, by every process of the agent."""
    processes = ("watch-a", "worker", "beat")
    return sum(
        total(scraped(env, p), "workqueue_adds_total", agent=env.agent_name, name="sync") for p in processes
    )


def test_controller_runtime_families_follow_a_sync(env: PublishEnv) -> None:
    widgets = Published(env, "widgets", "crmetrics.example.com", "widgets", "Widget")
    labels = {"agent": env.agent_name}
    adds_before, work_before = adds(env), sync_work(env)
    waits_before = value(
        scraped(env, "worker"), "workqueue_queue_duration_seconds_count", **labels, name="sync"
    )
    made = [("team-1", "w1"), ("team-1", "w2"), ("team-2", "w3")]
    for team, name in made:
        widgets.create(team, name, {"size": 1})
    for team, name in made:
        widgets.wait_copy(cluster_of(env, team), name)
    wait_for(
        lambda: sync_work(env) >= work_before + len(made),
        timeout=30,
        what=lambda: str(scraped(env, "worker")),
    )

    assert adds(env) >= adds_before + len(made)
    worker = scraped(env, "worker")
    waits = value(worker, "workqueue_queue_duration_seconds_count", **labels, name="sync") or 0.0
    assert waits >= (waits_before or 0.0) + len(made)
    assert value(worker, "workqueue_queue_duration_seconds_bucket", **labels, name="sync", le="+Inf") == waits
    latency = "syncflow_sync_latency_seconds_count"
    latencies = total(worker, latency, **labels, mode="publish", direction="spec")
    assert latencies >= len(made), "each copy's write observes how long after its key was queued it came"
    created = total(worker, "rest_client_requests_total", **labels, code="201", method="POST")
    assert created >= len(made)  # the copies, written by the worker's processes
    hosts = {dict(found)["host"] for name, found in worker if name == "rest_client_requests_total"}
    assert hosts and all(":" in host and "/" not in host for host in hosts), hosts

    watch = scraped(env, "watch-a")
    assert total(watch, "rest_client_requests_total", **labels, code="200", method="GET") > 0
    assert value(watch, "leader_election_master_status", **labels, name=f"syncagent.{env.agent_name}") == 1
    for process in ("watch-a", "worker", "beat"):
        depth = value(scraped(env, process), "workqueue_depth", **labels, name="sync")
        assert depth is not None, f"{process} reports no workqueue_depth"
