"""An object's page shows its source and copy as the engine finds them: two real devclusters, a
ConfigMap rule in the registry, the copy made by the reconciler itself; an unreachable side is a
message on the page, not an error."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from kubernetes import client

from syncflow.console.reader import Reader
from syncflow.console.sides import NO_COPY, Sides
from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.execute import run_keyed
from syncflow.queue.keys import ObjectKey
from syncflow.queue.renewer import LeaseRenewer
from syncflow.queue.service import QueueService
from syncflow.sync.endpoints import EndpointPair
from syncflow.sync.reconciler import Sync, get_or_none, sync_object
from syncflow.sync.registry import RuleEntry, RuleRegistry
from syncflow.sync.rule import IdentityPlacement, Resource, Side, SyncRule
from syncflow.sync.worker import RuleWorker
from tests.console.conftest import client_for, put
from tests.support.devcluster import DevclusterProcess, start_devcluster

pytestmark = pytest.mark.integration

CONFIGMAPS = Resource(group="", version="v1", kind="ConfigMap", plural="configmaps", namespaced=True)
NAMESPACE = "default"


@pytest.fixture(scope="module")
def clusters(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[DevclusterProcess, DevclusterProcess]]:
    upstream = start_devcluster(tmp_path_factory.mktemp("upstream"), "--no-simulate")
    try:
        downstream = start_devcluster(tmp_path_factory.mktemp("downstream"), "--no-simulate")
    except BaseException:
        upstream.stop()
        raise
    yield upstream, downstream
    downstream.stop()
    upstream.stop()


def rule(agent: str) -> SyncRule:
    return SyncRule(
        name="settings",
        agent=agent,
        source=Side(endpoint="up", resource=CONFIGMAPS, cluster="ws1"),
        target=Side(endpoint="down", resource=CONFIGMAPS),
        placement=IdentityPlacement(),
    )


def endpoints(up: client.ApiClient, down: client.ApiClient) -> EndpointPair:
    return EndpointPair("up", JsonApi(up, endpoint="up"), "down", JsonApi(down, endpoint="down"))


def reader_with(service: QueueService, pair: EndpointPair) -> Reader:
    registry = RuleRegistry(service.redis, service.settings.agent_name)
    return Reader(service, sides=Sides(lambda: RuleWorker(registry, pair, rules_running=set)))


@dataclass(frozen=True)
class Synced:
    """A ConfigMap synced by the reconciler: the endpoints, its key and its source path (a name of
    this test's agent, so tests never share an object)."""

    pair: EndpointPair
    key: str
    source: str


@pytest.fixture
def synced(service: QueueService, clusters: tuple[DevclusterProcess, DevclusterProcess]) -> Synced:
    """The rule in the registry, a ConfigMap in the upstream cluster and its copy made by the reconciler."""
    upstream, downstream = clusters
    pair = endpoints(load_client(str(upstream.kubeconfig)), load_client(str(downstream.kubeconfig)))
    the_rule = rule(service.settings.agent_name)
    RuleRegistry(service.redis, service.settings.agent_name).publish({"settings": RuleEntry.ready(the_rule)})
    name = f"web-{service.settings.agent_name}"
    pair.upstream.create(
        f"/api/v1/namespaces/{NAMESPACE}/configmaps", {"metadata": {"name": name}, "data": {"size": "10"}}
    )
    key = f"sync/settings/ws1/{NAMESPACE}/{name}"
    sync_object(Sync(the_rule, pair), ObjectKey.parse(key))
    put(service, key, "synced")
    put(service, key.replace("sync/", "status/", 1), "synced")
    return Synced(pair, key, f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}")


def test_source_and_copy_side_by_side_with_their_difference(service: QueueService, synced: Synced) -> None:
    reader = reader_with(service, synced.pair)
    detail = reader.object(synced.key)
    assert detail is not None and detail.source is not None and detail.copy_ is not None
    assert detail.source.object is not None and detail.source.object["data"] == {"size": "10"}
    assert detail.copy_.object is not None and detail.copy_.object["data"] == {"size": "10"}
    assert detail.copy_.path == synced.source and detail.copy_.endpoint == "down"
    assert "managedFields" not in detail.source.object["metadata"]
    assert detail.diff == []
    synced.pair.upstream.merge_patch(synced.source, {"data": {"size": "20"}})
    changed = client_for(reader).get(f"/api/objects/{synced.key}").json()
    assert changed["diff"] == [{"path": "data.size", "source": "20", "copy": "10"}]
    page = client_for(reader).get(f"/objects/{synced.key}").text
    assert 'data-testid="source"' in page and 'data-testid="copy"' in page and "data.size" in page
    synced.pair.downstream.delete(synced.source)
    gone = reader.object(synced.key)
    assert gone is not None and gone.copy_ is not None and gone.copy_.object is None
    assert gone.copy_.error == NO_COPY and gone.diff == []


def test_an_unreachable_cluster_is_a_message(
    service: QueueService, synced: Synced, clusters: tuple[DevclusterProcess, DevclusterProcess]
) -> None:
    away = load_client(str(clusters[1].kubeconfig))
    away.configuration.host = "http://127.0.0.1:9"  # nothing listens on the discard port
    pair = EndpointPair(
        "up", synced.pair.upstream, "down", JsonApi(away, endpoint="down", timeout=(1.0, 1.0))
    )
    answer = client_for(reader_with(service, pair)).get(f"/api/objects/{synced.key}")
    assert answer.status_code == 200
    body = answer.json()
    assert body["source"]["object"]["data"] == {"size": "10"}
    assert body["copy"]["object"] is None and body["copy"]["error"]
    assert "Connection refused" in body["copy"]["error"] or "refused" in body["copy"]["error"].lower()


def test_a_rule_not_in_the_registry_says_so(service: QueueService, synced: Synced) -> None:
    put(service, "sync/unknown/ws1/default/web", "parked")
    reader = reader_with(service, synced.pair)
    detail = reader.object("sync/unknown/ws1/default/web")
    assert detail is not None and detail.source is not None
    assert detail.source.error.startswith("rule unknown is pending")


def test_a_run_that_finds_the_source_gone_forgets_the_key(service: QueueService, synced: Synced) -> None:
    key = ObjectKey.parse(synced.key)
    sync = Sync(rule(service.settings.agent_name), synced.pair)
    service.add(key)
    assert (
        run_keyed(service, LeaseRenewer(30), lambda k: sync_object(sync, k), synced.key, "t1#1").outcome
        == "ok"
    )
    assert reader_with(service, synced.pair).object(synced.key, sides=False).row.state == "synced"  # type: ignore[union-attr]
    synced.pair.upstream.delete(synced.source)
    outcomes = []
    for run in range(4):  # delete the copy, wait for it, release the finalizer; then the source is gone
        gone_before = get_or_none(synced.pair.upstream, synced.source) is None
        service.add(key)  # as the watch events of those writes do
        report = run_keyed(service, LeaseRenewer(30), lambda k: sync_object(sync, k), synced.key, f"t{run}#2")
        outcomes.append(report.outcome)
        if gone_before:
            break
    assert outcomes[-1] == "ok" and len(outcomes) < 4, outcomes
    assert get_or_none(synced.pair.downstream, synced.source) is None, "the copy went with its source"
    assert reader_with(service, synced.pair).object(synced.key) is None, "the key names nothing any more"
    assert reader_with(service, synced.pair).object(synced.key.replace("sync/", "status/", 1)) is None
