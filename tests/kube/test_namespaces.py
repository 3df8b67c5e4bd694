"""Creates into a namespace (syncflow.sync.namespaces) against a devcluster of their own, counted by
method at /debug/requests: an existing namespace is never read first; a missing one is made; an
agent that may not make it gets the create's own 404."""

from __future__ import annotations

import json
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes.client.exceptions import ApiException

from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.sync.namespaces import create_in
from tests.support.devcluster import DevclusterProcess, start_devcluster

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process


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


def _requests(server: DevclusterProcess, token: str = "") -> Counter[str]:
    """The server's request counts by method (``token``: an admin's, on a server that requires one)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(server.url + "/debug/requests", headers=headers)
    with urllib.request.urlopen(request, timeout=10, context=server.ssl_context()) as response:
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
    # the failed create, the namespace's create, the create again; then the check above
    assert _requests(server) - before == Counter({"POST": 3, "GET": 1})


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
    # the create, the namespace's create (409: it exists), the create again
    assert _requests(server) - before == Counter({"POST": 3})


def test_a_cluster_scoped_404_is_raised_at_once(server: DevclusterProcess, api: JsonApi) -> None:
    before = _requests(server)
    with pytest.raises(ApiException) as missing:
        create_in(api, "/apis/nothing.example.com/v1/things", "", {"apiVersion": "nothing.example.com/v1"})
    assert missing.value.status == 404
    assert _requests(server) - before == Counter({"POST": 1})


ADMIN_TOKEN = "admin-s3cret"
RBAC = "rbac.authorization.k8s.io"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevclusterProcess, str]]:
    """A devcluster of its own, and the token of a ServiceAccount there that may create ConfigMaps
    in every namespace, but not Namespaces."""
    workdir = tmp_path_factory.mktemp("namespaces-rbac")
    started = start_devcluster(workdir, "--no-simulate", token=ADMIN_TOKEN)
    admin = load_client(str(started.kubeconfig))
    as_admin = JsonApi(admin)
    as_admin.create("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "agent"}})
    as_admin.create(
        f"/apis/{RBAC}/v1/clusterroles",
        {
            "metadata": {"name": "configmap-writer"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}],
        },
    )
    as_admin.create(
        f"/apis/{RBAC}/v1/clusterrolebindings",
        {
            "metadata": {"name": "agent-writes-configmaps"},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "configmap-writer"},
            "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": "default"}],
        },
    )
    minted = as_admin.create(
        "/api/v1/namespaces/default/serviceaccounts/agent/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    admin.close()  # type: ignore[no-untyped-call]
    yield started, minted["status"]["token"]
    started.stop()


def test_an_agent_that_may_not_make_the_namespace_gets_the_creates_own_404(
    secured: tuple[DevclusterProcess, str], tmp_path: Path
) -> None:
    server, token = secured
    kubeconfig = tmp_path / "agent.kubeconfig"
    kubeconfig.write_text(server.kubeconfig.read_text().replace(ADMIN_TOKEN, token))
    agent = load_client(str(kubeconfig))
    namespace = _fresh_name()
    before = _requests(server, ADMIN_TOKEN)
    with pytest.raises(ApiException) as missing:
        create_in(JsonApi(agent), f"/api/v1/namespaces/{namespace}/configmaps", namespace, _config_map("c"))
    agent.close()  # type: ignore[no-untyped-call]
    assert missing.value.status == 404
    assert json.loads(str(missing.value.body))["message"] == f'namespaces "{namespace}" not found'
    assert isinstance(missing.value.__cause__, ApiException) and missing.value.__cause__.status == 403
    assert _requests(server, ADMIN_TOKEN) - before == Counter({"POST": 2})  # the create, the namespace's
