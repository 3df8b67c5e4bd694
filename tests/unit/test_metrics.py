"""The metric helpers: what each records, the agent label on every served sample, the queue gauges
read from Redis, task outcomes, and the multiprocess guard."""

from __future__ import annotations

import sys
import time
import uuid
from typing import Any

import fakeredis
import pytest
from prometheus_client import REGISTRY, CollectorRegistry, Counter

from syncflow.config import ConfigError, load_settings
from syncflow.metrics import celery as celery_metrics
from syncflow.metrics import multiprocess, record
from syncflow.metrics.exposition import AgentLabel
from syncflow.metrics.queue import QueueCollector
from syncflow.queue.errors import PermanentError, RequeueAfter, TransientError
from syncflow.queue.keys import ObjectKey
from syncflow.queue.registry import register_verb
from syncflow.sync.reconciler import Sync
from syncflow.sync.rule import Resource, Side, SyncRule


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}.example.com"


def test_sync_run_times_every_run_and_counts_failures_by_kind() -> None:
    resource = unique("things.")
    with record.sync_run(resource):
        pass
    for error in (TransientError("later"), PermanentError("never")):
        with pytest.raises(type(error)), record.sync_run(resource):
            raise error
    with pytest.raises(KeyError), record.sync_run(resource):
        raise KeyError("unclassified")
    with pytest.raises(RequeueAfter), record.sync_run(resource):
        raise RequeueAfter(1.0)  # waiting is not a failure
    assert sample("syncer_sync_duration_seconds_count", resource=resource) == 5
    assert sample("syncer_sync_errors_total", resource=resource, kind="transient") == 1
    assert sample("syncer_sync_errors_total", resource=resource, kind="permanent") == 1
    assert sample("syncer_sync_errors_total", resource=resource, kind="error") == 1


def rule(group: str, status: str) -> SyncRule:
    things = Resource(group=group, version="v1", plural="things", kind="Thing", namespaced=True)
    return SyncRule(
        name="things",
        agent="agent",
        source=Side(endpoint="kcp", resource=things),
        target=Side(endpoint="service", resource=things),
        status=status,  # type: ignore[arg-type]
    )


def synced(rule: SyncRule) -> Sync:
    return Sync(rule, endpoints=None)  # type: ignore[arg-type]


def test_writes_count_by_group_resource_and_direction_upsync_rules_as_upsync() -> None:
    down, up = unique("down"), unique("up")
    spec_down = synced(rule(down, "return"))
    for direction in ("spec", "spec", "status", "delete"):
        spec_down.synced(direction)  # type: ignore[arg-type]
    carry = synced(rule(up, "carry"))
    for direction in ("spec", "status", "delete"):
        carry.synced(direction)  # type: ignore[arg-type]
    resource = f"things.{down}"
    assert sample("syncer_resources_synced_total", resource=resource, direction="spec") == 2
    assert sample("syncer_resources_synced_total", resource=resource, direction="status") == 1
    assert sample("syncer_resources_synced_total", resource=resource, direction="delete") == 1
    assert sample("syncer_resources_synced_total", resource=f"things.{up}", direction="upsync") == 2
    assert sample("syncer_resources_synced_total", resource=f"things.{up}", direction="delete") == 1


def test_a_write_observes_its_latency_from_when_its_key_was_queued() -> None:
    name = unique("lat")
    sync = synced(rule(name, "return").model_copy(update={"name": name}))
    sync.synced("spec")  # outside a keyed run: nothing known of when it was queued
    assert sample("syncflow_sync_latency_seconds_count", mode="workload", rule=name, direction="spec") == 0
    with record.key_queued_at(time.time() - 0.3, "workload"):
        sync.synced("spec")
        sync.synced("status")
    bucket = {"mode": "workload", "rule": name, "direction": "spec"}
    assert sample("syncflow_sync_latency_seconds_count", **bucket) == 1
    assert sample("syncflow_sync_latency_seconds_bucket", **bucket, le="0.2") == 0, "0.3 s or more"
    assert sample("syncflow_sync_latency_seconds_bucket", **bucket, le="300.0") == 1
    assert sample("syncflow_sync_latency_seconds_count", mode="workload", rule=name, direction="status") == 1


def test_rules_gauge_follows_the_wanted_rules_and_drops_the_rest() -> None:
    first, second = unique("rule-a"), unique("rule-b")
    record.rules({first: True, second: False})
    assert sample("syncflow_sync_rule_ready", rule=first) == 1
    assert sample("syncflow_sync_rule_ready", rule=second) == 0
    record.rules({second: True})
    assert REGISTRY.get_sample_value("syncflow_sync_rule_ready", {"rule": first}) is None
    assert sample("syncflow_sync_rule_ready", rule=second) == 1
    record.rules({})
    assert REGISTRY.get_sample_value("syncflow_sync_rule_ready", {"rule": second}) is None


def test_connection_heartbeat_and_published_resources() -> None:
    endpoint = unique("endpoint-")
    record.connection(endpoint, True)
    assert sample("syncer_connection_status", endpoint=endpoint) == 1
    record.connection(endpoint, False)
    assert sample("syncer_connection_status", endpoint=endpoint) == 0
    record.connection("", False)  # no endpoint name: nothing to report
    assert REGISTRY.get_sample_value("syncer_connection_status", {"endpoint": ""}) is None
    before = sample("syncer_heartbeat_total", result="unreachable")
    record.heartbeat("unreachable")
    assert sample("syncer_heartbeat_total", result="unreachable") == before + 1
    record.published_resources(3)
    assert sample("sync_agent_published_resource") == 3


@pytest.mark.parametrize(
    ("retval", "state", "outcome"),
    [
        (3, "SUCCESS", "ok"),
        ({"promoted": 1}, "SUCCESS", "ok"),
        ("anything else", "SUCCESS", "ok"),  # never an unbounded label
        (TransientError("later"), "FAILURE", "transient"),
        (PermanentError("never"), "FAILURE", "permanent"),
        (KeyError("x"), "FAILURE", "error"),
        (None, "FAILURE", "error"),
    ],
)
def test_task_outcome_labels_are_bounded(retval: Any, state: str, outcome: str) -> None:
    assert celery_metrics.outcome_of(retval, state) == outcome


def test_agent_label_is_added_to_every_sample() -> None:
    registry = CollectorRegistry()
    counter = Counter("things_done", "Things.", ["kind"], registry=registry)
    counter.labels("a").inc(2)
    labelled = list(AgentLabel("billing", [registry]).collect())
    samples = [s for family in labelled for s in family.samples]
    assert samples and all(s.labels["agent"] == "billing" for s in samples)
    assert {s.labels["kind"] for s in samples if s.name == "things_done_total"} == {"a"}


def test_queue_collector_reads_the_queue_from_redis() -> None:
    register_verb("sync", "sync", names_rule=True)
    settings = load_settings(agent_name=f"m{uuid.uuid4().hex[:8]}")
    collector = QueueCollector(settings, fakeredis.FakeRedis())
    service = collector.service
    service.queues["sync"].add(ObjectKey("sync", "things", "root:ws", "default", "a"))
    service.redis.rpush(f"sf:{settings.agent_name}:celery:sync-bulk", "m1", "m2")
    families = {family.name: family for family in collector.collect()}
    values = {
        (s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples
    }
    assert values[("syncflow_redis_up", ())] == 1
    assert values[("syncflow_queue_keys", (("queue", "sync"), ("state", "dirty")))] == 1
    assert values[("syncflow_queue_keys", (("queue", "sync"), ("state", "pending")))] == 1
    assert values[("syncflow_queue_keys", (("queue", "status"), ("state", "parked")))] == 0
    assert values[("syncflow_queue_messages", (("queue", "sync-bulk"),))] == 2
    assert values[("workqueue_depth", (("name", "sync"),))] == 1  # controller-runtime's: pending keys
    assert values[("workqueue_depth", (("name", "status"),))] == 0


def test_queue_collector_reports_redis_down_without_failing_the_scrape() -> None:
    settings = load_settings(agent_name="down", redis_url="redis://127.0.0.1:1/0")
    families = list(QueueCollector(settings).collect())
    assert [(f.name, [s.value for s in f.samples]) for f in families] == [("syncflow_redis_up", [0.0])]


def test_multiprocess_mode_cannot_be_chosen_after_metrics_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "prometheus_client.values" in sys.modules  # this test process made metrics already
    monkeypatch.delenv(multiprocess.ENV, raising=False)
    with pytest.raises(multiprocess.MultiprocessError, match="before its multiprocess directory"):
        multiprocess.prepare("worker")


@pytest.mark.parametrize("address", ["9090", "host:", ":x", "host:70000"])
def test_metrics_address_must_be_host_and_port(address: str) -> None:
    with pytest.raises(ConfigError, match="metrics_address"):
        load_settings(metrics_address=address)


def test_queue_collector_reports_the_queue_when_a_rabbitmq_broker_is_down() -> None:
    register_verb("sync", "sync", names_rule=True)
    settings = load_settings(
        agent_name=f"m{uuid.uuid4().hex[:8]}", broker_url="amqp://guest:guest@127.0.0.1:1//"
    )
    collector = QueueCollector(settings, fakeredis.FakeRedis())
    collector.service.queues["sync"].add(ObjectKey("sync", "things", "root:ws", "default", "a"))
    families = {family.name: family for family in collector.collect()}
    assert [s.value for s in families["syncflow_redis_up"].samples] == [1]
    assert sum(s.value for s in families["syncflow_queue_keys"].samples) == 2  # dirty + pending
    assert sum(s.value for s in families["workqueue_depth"].samples) == 1
    assert families["syncflow_queue_messages"].samples == []
