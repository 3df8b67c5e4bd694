"""The related index (which primaries an object of a related resource concerns) and the watch handler
that turns events on related resources into ``related`` keys."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import fakeredis
import pytest

from syncflow.kube.refs import ObjectRef
from syncflow.queue.keys import ObjectKey
from syncflow.sync.related.index import EVERY, IndexedObject, RelatedIndex, object_id
from syncflow.sync.related.watches import RelatedEvents, related_sides
from syncflow.sync.rule import Locator, Related, RelatedWatch, Resource, Side, SyncRule
from tests.support.copies import copy_of

SECRETS = Resource(group="", version="v1", plural="secrets", kind="Secret", namespaced=True)
CERTS = Resource(
    group="certs.example.com", version="v1", plural="certificates", kind="Certificate", namespaced=True
)
LOCAL_CERTS = Resource(
    group="cert-manager.io", version="v1", plural="certificates", kind="Certificate", namespaced=True
)


def key(name: str, rule: str = "certs") -> ObjectKey:
    return ObjectKey("related", rule, "ws1", "default", name)


@pytest.fixture
def index() -> RelatedIndex:
    return RelatedIndex(fakeredis.FakeRedis(), "agent")


def secret_id(name: str, endpoint: str = "service", cluster: str = "", namespace: str = "ns") -> str:
    return object_id(endpoint, SECRETS, cluster, namespace, name)


def test_recorded_objects_map_back_to_their_primaries(index: RelatedIndex) -> None:
    index.record(key("a"), [secret_id("tls-a"), secret_id("shared")])
    index.record(key("b"), [secret_id("shared")])
    assert index.lookup([secret_id("tls-a")]) == {key("a")}
    assert index.lookup([secret_id("shared"), secret_id("other")]) == {key("a"), key("b")}
    assert index.lookup([secret_id("tls-a", endpoint="kcp")]) == set()


def test_recording_again_drops_what_a_primary_no_longer_concerns(index: RelatedIndex) -> None:
    index.record(key("a"), [secret_id("old")])
    index.record(key("a"), [secret_id("new")])
    assert index.lookup([secret_id("old")]) == set()
    assert index.lookup([secret_id("new")]) == {key("a")}


def test_forgetting_a_primary_or_a_rule(index: RelatedIndex) -> None:
    index.record(key("a"), [secret_id("x")])
    index.record(key("b"), [secret_id("x")])
    index.record(key("c", rule="other"), [secret_id("x")])
    index.forget(key("a"))
    assert index.lookup([secret_id("x")]) == {key("b"), key("c", rule="other")}
    assert index.forget_rule("certs") == 1
    assert index.lookup([secret_id("x")]) == {key("c", rule="other")}


def test_ids_name_the_object_and_parse_back(index: RelatedIndex) -> None:
    recorded = object_id("kcp", SECRETS, "ws1", "default", "tls")
    assert IndexedObject.parse(recorded) == IndexedObject("kcp", "", "v1", "secrets", "ws1", "default", "tls")
    index.record(key("a"), [recorded, secret_id("x")])
    index.record(key("b", rule="other"), [secret_id("y")])
    assert index.recorded_by_rule("certs") == {recorded, secret_id("x")}


def test_primaries_that_recorded_nothing_are_known_as_such(index: RelatedIndex) -> None:
    index.record(key("a"), [])  # resolved, nothing found yet: still recorded
    assert index.unrecorded([key("a"), key("b")]) == [key("b")]


def rule(watch: RelatedWatch | None = None, name: str = "certs") -> SyncRule:
    return SyncRule(
        name=name,
        agent="agent",
        source=Side(endpoint="kcp", resource=CERTS),
        target=Side(endpoint="service", resource=LOCAL_CERTS),
        related=(
            Related(
                identifier="tls",
                origin="target",
                origin_resource=SECRETS,
                destination_resource=SECRETS,
                object=Locator(reference="spec.secretName"),
                watch=watch,
            ),
        ),
    )


class Api:
    def __init__(self, objects: dict[str, dict[str, Any]]) -> None:
        self.objects = objects
        self.queries: list[tuple[str, dict[str, str]]] = []

    def get(self, path: str, **query: str) -> dict[str, Any]:
        self.queries.append((path, query))
        if path in self.objects:
            return self.objects[path]
        raise AssertionError(f"unexpected GET {path}")


class Endpoints:
    def __init__(self, apis: dict[str, Api]) -> None:
        self.apis = apis

    def api(self, endpoint: str, cluster: str) -> Api:
        return self.apis[endpoint]

    def everywhere(self, endpoint: str) -> list[Api]:
        return [self.apis[endpoint]]


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[list[ObjectKey], bool]] = []

    def __call__(self, keys: Iterable[ObjectKey], bulk: bool) -> None:
        self.calls.append((list(keys), bulk))


def handler(
    index: RelatedIndex, rules: list[SyncRule], apis: dict[str, Api] | None = None
) -> tuple[RelatedEvents, Recorder]:
    recorder = Recorder()
    events = RelatedEvents("service", SECRETS, index, Endpoints(apis or {}), recorder)
    events.rules = rules
    return events, recorder


def test_an_event_on_an_indexed_object_or_namespace_enqueues_its_primaries(index: RelatedIndex) -> None:
    index.record(key("a"), [secret_id("tls-a")])
    index.record(key("b"), [secret_id(EVERY)])
    index.record(key("gone", rule="gone"), [secret_id("tls-a")])
    events, recorder = handler(index, [rule()])
    events.on_event("ADDED", {"metadata": {"name": "tls-a", "namespace": "ns"}}, ObjectRef("", "ns", "tls-a"))
    # the namespace-wide entry of b matches too; the entry of a rule this watch no longer serves does not
    assert recorder.calls == [([key("a"), key("b")], False)]
    events.on_event("ADDED", {"metadata": {"name": "x", "namespace": "other"}}, ObjectRef("", "other", "x"))
    assert len(recorder.calls) == 1


def test_a_relist_enqueues_the_primaries_of_every_listed_object_in_bulk(index: RelatedIndex) -> None:
    index.record(key("a"), [secret_id("tls-a")])
    index.record(key("b"), [secret_id("tls-b")])
    events, recorder = handler(index, [rule()])
    events.on_resync({ObjectRef("", "ns", "tls-a"), ObjectRef("", "ns", "tls-b"), ObjectRef("", "ns", "x")})
    assert recorder.calls == [([key("a"), key("b")], True)]


def test_watch_by_owner_maps_through_the_local_primarys_sync_metadata(index: RelatedIndex) -> None:
    service = Api({"/apis/cert-manager.io/v1/namespaces/ns/certificates/copy-web": copy_of("web")})
    events, recorder = handler(index, [rule(RelatedWatch(by_owner=True))], {"service": service})
    owned = {
        "metadata": {
            "name": "tls",
            "namespace": "ns",
            "ownerReferences": [
                {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "name": "copy-web"},
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "ignored"},
            ],
        }
    }
    events.on_event("ADDED", owned, ObjectRef("", "ns", "tls"))
    assert recorder.calls == [([key("web")], False)]


def test_watch_by_selector_enqueues_every_matching_primary(index: RelatedIndex) -> None:
    listing = {"items": [copy_of("one"), copy_of("two")]}
    service = Api({"/apis/cert-manager.io/v1/certificates": listing})
    events, recorder = handler(index, [rule(RelatedWatch(by_selector="app=shop"))], {"service": service})
    events.on_event("MODIFIED", {"metadata": {"name": "s", "namespace": "ns"}}, ObjectRef("", "ns", "s"))
    assert recorder.calls == [([key("one"), key("two")], False)]
    assert service.queries[0][1]["labelSelector"] == "app=shop,syncagent.kcp.io/agent-name=agent"


def test_a_failed_watch_lookup_is_logged_and_the_index_still_answers(index: RelatedIndex) -> None:
    index.record(key("a"), [secret_id("tls")])
    events, recorder = handler(index, [rule(RelatedWatch(by_selector="app=shop"))], {"service": Api({})})
    events.on_event("MODIFIED", {"metadata": {"name": "tls", "namespace": "ns"}}, ObjectRef("", "ns", "tls"))
    assert recorder.calls == [([key("a")], False)]


def test_a_rule_watches_both_sides_of_each_related_resource() -> None:
    assert list(related_sides(rule())) == [("service", SECRETS), ("kcp", SECRETS)]
