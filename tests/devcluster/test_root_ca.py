"""Every namespace has a ``kube-root-ca.crt`` ConfigMap holding the server's CA, as kube-controller-manager
publishes it: the initial namespaces, new ones, and again after it is deleted or changed."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.devcluster import DevclusterProcess, Kubectl, start_devcluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

ROOT_CA = "kube-root-ca.crt"


@pytest.fixture(scope="module")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """A server with a token, so it serves HTTPS with a CA of its own."""
    server = start_devcluster(tmp_path_factory.mktemp("root-ca"), "--no-simulate", token="s3cret")
    yield server
    server.stop()


@pytest.fixture
def namespace(kubectl: Kubectl) -> str:
    """A fresh namespace, created with kubectl."""
    name = "t-" + uuid.uuid4().hex[:10]
    kubectl.run("create", "namespace", name)
    return name


def _serving_ca(devcluster: DevclusterProcess) -> str:
    cluster = yaml.safe_load(devcluster.kubeconfig.read_text())["clusters"][0]["cluster"]
    return base64.b64decode(cluster["certificate-authority-data"]).decode()


def _root_ca(kubectl: Kubectl, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = kubectl.json("get", "configmap", ROOT_CA, "-n", namespace)
    return found


def test_every_initial_namespace_has_the_serving_ca(kubectl: Kubectl, devcluster: DevclusterProcess) -> None:
    listed = kubectl.json("get", "configmaps", "-A", "--field-selector", f"metadata.name={ROOT_CA}")["items"]
    namespaces = [n["metadata"]["name"] for n in kubectl.json("get", "namespaces")["items"]]
    assert sorted(cm["metadata"]["namespace"] for cm in listed) == sorted(namespaces)
    ca = _serving_ca(devcluster)
    assert ca.startswith("-----BEGIN CERTIFICATE-----")
    assert all(cm["data"] == {"ca.crt": ca} for cm in listed)


def test_a_new_namespace_gets_it_with_kubes_description(
    kubectl: Kubectl, devcluster: DevclusterProcess, namespace: str
) -> None:
    published = _root_ca(kubectl, namespace)
    assert published["data"] == {"ca.crt": _serving_ca(devcluster)}
    assert "kubernetes.default.svc" in published["metadata"]["annotations"]["kubernetes.io/description"]
    header, row = kubectl.run("get", "configmaps", "-n", namespace).stdout.splitlines()
    assert header.split() == ["NAME", "DATA", "AGE"] and row.split()[:2] == [ROOT_CA, "1"]


def test_it_comes_back_when_deleted_and_its_data_is_restored(
    kubectl: Kubectl, devcluster: DevclusterProcess, namespace: str
) -> None:
    first = _root_ca(kubectl, namespace)["metadata"]["uid"]
    kubectl.run("delete", "configmap", ROOT_CA, "-n", namespace)
    again = wait_for(
        lambda: (found := _root_ca(kubectl, namespace))["metadata"]["uid"] != first and found,
        what="kube-root-ca.crt to be published again",
    )
    assert again["data"] == {"ca.crt": _serving_ca(devcluster)}

    kubectl.run(
        "patch", "configmap", ROOT_CA, "-n", namespace, "--type=merge", "-p", '{"data":{"ca.crt":"x"}}'
    )
    wait_for(
        lambda: _root_ca(kubectl, namespace)["data"] == {"ca.crt": _serving_ca(devcluster)},
        what="kube-root-ca.crt's data to be restored",
    )


def test_it_goes_with_its_namespace(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("delete", "namespace", namespace, "--wait=true", "--timeout=20s")
    gone = kubectl.run(
        "get", "configmaps", "-A", "--field-selector", f"metadata.namespace={namespace}", "-o", "json"
    )
    assert json.loads(gone.stdout)["items"] == []


def test_without_tls_the_bundle_is_empty(tmp_path: Path) -> None:
    plain = start_devcluster(tmp_path, "--no-simulate")
    try:
        published = Kubectl(plain.kubeconfig, tmp_path / "cache").json(
            "get", "configmap", ROOT_CA, "-n", "default"
        )
        assert published["data"] == {"ca.crt": ""}
    finally:
        plain.stop()
