"""Point 10: bearer-token authentication."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.devcluster import DevclusterProcess, Kubectl, start_devcluster

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    server = start_devcluster(tmp_path_factory.mktemp("secured"), token="s3cret")
    yield server
    server.stop()


def test_token_implies_https(secured: DevclusterProcess) -> None:
    assert secured.url.startswith("https://")
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(secured.url + "/readyz", timeout=10)  # the CA is not trusted by default


def test_requests_without_token_get_401(secured: DevclusterProcess) -> None:
    with pytest.raises(urllib.error.HTTPError) as denied:
        urllib.request.urlopen(secured.url + "/api/v1/namespaces", timeout=10, context=secured.ssl_context())
    body = json.loads(denied.value.read())
    assert denied.value.code == 401 and body["kind"] == "Status" and body["reason"] == "Unauthorized"
    wrong = urllib.request.Request(
        secured.url + "/api/v1/namespaces", headers={"Authorization": "Bearer nope"}
    )
    with pytest.raises(urllib.error.HTTPError) as rejected:
        urllib.request.urlopen(wrong, timeout=10, context=secured.ssl_context())
    assert rejected.value.code == 401


def test_kubectl_with_written_kubeconfig_is_accepted(secured: DevclusterProcess, tmp_path: Path) -> None:
    assert yaml.safe_load(secured.kubeconfig.read_text())["users"][0]["user"]["token"] == "s3cret"
    right = urllib.request.Request(
        secured.url + "/api/v1/namespaces", headers={"Authorization": "Bearer s3cret"}
    )
    with urllib.request.urlopen(right, timeout=10, context=secured.ssl_context()) as response:
        assert response.status == 200
    out = Kubectl(secured.kubeconfig, tmp_path / "cache").run("get", "namespaces", "-o", "name").stdout
    assert "namespace/default" in out.split()


def test_health_is_open(secured: DevclusterProcess) -> None:
    with urllib.request.urlopen(
        secured.url + "/readyz", timeout=10, context=secured.ssl_context()
    ) as response:
        assert response.read() == b"ok"


def test_every_path_but_health_requires_a_known_token(secured: DevclusterProcess) -> None:
    for path in ("/version", "/api", "/openapi/v3", "/debug/requests", "/debug/watches", "/no/such/path"):
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            request = urllib.request.Request(secured.url + path, headers=headers)
            with pytest.raises(urllib.error.HTTPError) as denied:
                urllib.request.urlopen(request, timeout=10, context=secured.ssl_context())
            assert denied.value.code == 401, path
    admin = urllib.request.Request(
        secured.url + "/debug/requests", headers={"Authorization": "Bearer s3cret"}
    )
    with urllib.request.urlopen(admin, timeout=10, context=secured.ssl_context()) as response:
        assert json.loads(response.read())["GET"] > 0
