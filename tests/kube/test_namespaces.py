"""Creates into a namespace (syncflow.sync.namespaces) against a devcluster of their own, counted by
method at /debug/requests: an existing namespace is never read first; a missing one is made."""

from __future__ import annotations

import json
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from kubernetes.client.exceptions import ApiException

from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.sync.namespaces import create_in
from tests.support.devcluster import DevclusterProcess, start_devcluster


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """A devcluster nothing else talks to, so its request counts are this module's."""
    started = start_devcluster(tmp_path_factory.mktemp("namespaces"), "--no-simulate")
    yield started
    started.stop()


@pytest.fixture
def api(server: DevclusterProcess) -> Iterator[JsonApi]:
    client = load_client(str(server.kubeconfig))
    yield JsonApi(client)
    client.close()  # type: ignore[no-untyped-call]


def _requests(server: DevclusterProcess) -> Counter[str]:
    with urllib.request.urlopen(server.url + "/debug/requests", timeout=10) as response:
        return Counter(json.loads(response.read()))


def _config_map(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def _make_namespace(api: JsonApi, name: str) -> None:
    api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def _fresh_name() -> str:
    return "ns-" + uuid.uuid4().hex[:10]


def test_a_create_into_an_existing_namespace_reads_nothing_first(
    server: DevclusterProcess, api: JsonApi
) -> None:
    namespace = _fresh_name()
    api.create(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    before = _requests(server)
    for i in range(3):
        create_in(api, f"/api/v1/namespaces/{namespace}/configmaps", namespace, _config_map(f"c{i}"))
    assert _requests(server) - before == Counter({"POST": 3})


def test_a_missing_namespace_is_made_as_given_then_the_object(
    server: DevclusterProcess, api: JsonApi
) -> None:
    namespace = _fresh_name()
    given = {"metadata": {"name": namespace, "labels": {"made-by": "syncflow"}}}
    before = _requests(server)
    created = create_in(api, f"/api/v1/namespaces/{namespace}/configmaps", namespace, _config_map("c"), given)
    assert created["metadata"]["namespace"] == namespace
    assert api.get(f"/api/v1/namespaces/{namespace}")["metadata"]["labels"]["made-by"] == "syncflow"
    # the failed create, the namespace's GET and create, the create again; then the check above
    assert _requests(server) - before == Counter({"POST": 3, "GET": 2})


def test_a_missing_resource_is_a_404_after_one_more_try(server: DevclusterProcess, api: JsonApi) -> None:
    namespace = _fresh_name()
    api.create(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    path = f"/apis/nothing.example.com/v1/namespaces/{namespace}/things"
    before = _requests(server)
    with pytest.raises(ApiException) as missing:
        create_in(api, path, namespace, {"apiVersion": "nothing.example.com/v1", "kind": "Thing"})
    assert missing.value.status == 404
    assert _requests(server) - before == Counter({"POST": 2, "GET": 1})


def test_a_cluster_scoped_404_is_raised_at_once(server: DevclusterProcess, api: JsonApi) -> None:
    before = _requests(server)
    with pytest.raises(ApiException) as missing:
        create_in(api, "/apis/nothing.example.com/v1/things", "", {"apiVersion": "nothing.example.com/v1"})
    assert missing.value.status == 404
    assert _requests(server) - before == Counter({"POST": 1})
