"""Fixtures: a real devcluster process, the real kubectl binary and the official Python client."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, config, dynamic

from tests.support.devcluster import DevclusterProcess, Kubectl, start_devcluster


@pytest.fixture(scope="session")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """One devcluster for the session, with a short bookmark interval and a small watch window.

    Without simulated controllers, like envtest's kube-apiserver: these tests pin the API server's
    own semantics, and a controller writing status meanwhile would race them. The simulation's
    tests (test_simulate*.py) override this fixture with a simulated devcluster.
    """
    server = start_devcluster(
        tmp_path_factory.mktemp("devcluster"),
        "--bookmark-interval",
        "0.3",
        "--watch-history",
        "500",
        "--no-simulate",
    )
    yield server
    server.stop()


@pytest.fixture
def kubectl(devcluster: DevclusterProcess, tmp_path: Path) -> Kubectl:
    """kubectl against the session devcluster, with a private discovery cache."""
    return Kubectl(devcluster.kubeconfig, tmp_path / "kube-cache")


@pytest.fixture
def api_client(devcluster: DevclusterProcess) -> Iterator[client.ApiClient]:
    """The official Python client, configured from the devcluster's kubeconfig."""
    api = config.new_client_from_config(config_file=str(devcluster.kubeconfig))
    yield api
    api.close()


@pytest.fixture
def dyn(api_client: client.ApiClient) -> dynamic.DynamicClient:
    """The official client's DynamicClient."""
    return dynamic.DynamicClient(api_client)


@pytest.fixture
def namespace(api_client: client.ApiClient) -> str:
    """A fresh namespace for one test."""
    name = "t-" + uuid.uuid4().hex[:10]
    client.CoreV1Api(api_client).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    return name
