"""Issue 10 item 7: LoadBalancer addresses from a configured pool, Endpoints and EndpointSlices that
follow Service selectors and Ready pods, and ``--no-simulate``."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, config

from tests.support.devcluster import DevclusterProcess, simulated_devcluster, start_devcluster
from tests.support.waiting import wait_for
from tests.support.workloads import status_field, workload

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process

POOL = ("10.77.0.1", "10.77.0.2")
DELAY = 0.3


@pytest.fixture(scope="module")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """This module's devcluster runs the simulated controllers (conftest's does not)."""
    yield from simulated_devcluster(tmp_path_factory.mktemp("simulated"))


def _client(tmp_path_factory: pytest.TempPathFactory, *flags: str) -> Iterator[client.ApiClient]:
    server = start_devcluster(tmp_path_factory.mktemp("devcluster"), *flags)
    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        yield api
    finally:
        api.close()
        server.stop()


@pytest.fixture(scope="module")
def pool_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[client.ApiClient]:
    """A devcluster whose load balancer pool holds two addresses."""
    yield from _client(
        tmp_path_factory, "--load-balancer-ips", f"{POOL[0]}-{POOL[1]}", "--load-balancer-delay", str(DELAY)
    )


def _service(name: str, kind: str = "LoadBalancer", **spec: object) -> dict[str, object]:
    return {"metadata": {"name": name}, "spec": {"type": kind, "ports": [{"port": 80}], **spec}}


def _ingress_ip(core: client.CoreV1Api, name: str) -> str | None:
    balancer = status_field(core.read_namespaced_service(name, "default"), "load_balancer")
    return balancer.ingress[0].ip if balancer is not None and balancer.ingress else None


def test_load_balancers_get_addresses_from_the_pool_after_the_delay(pool_client: client.ApiClient) -> None:
    core = client.CoreV1Api(pool_client)
    started = time.monotonic()
    for name in ("lb-a", "lb-b"):
        core.create_namespaced_service("default", _service(name))
    core.create_namespaced_service("default", _service("plain", "ClusterIP"))
    first = wait_for(lambda: _ingress_ip(core, "lb-a"), what="lb-a's address")
    assert time.monotonic() - started >= DELAY
    second = wait_for(lambda: _ingress_ip(core, "lb-b"), what="lb-b's address")
    assert {first, second} == set(POOL)
    assert _ingress_ip(core, "plain") is None
    core.create_namespaced_service("default", _service("lb-c"))  # the pool is exhausted: it waits
    core.delete_namespaced_service("lb-a", "default", _preload_content=False)  # main answers a Status
    assert wait_for(lambda: _ingress_ip(core, "lb-c"), what="lb-c gets the released address") == first
    core.patch_namespaced_service("lb-b", "default", {"spec": {"type": "ClusterIP"}})
    wait_for(lambda: _ingress_ip(core, "lb-b") is None, what="lb-b's address taken back")


def test_endpoints_follow_the_selector_and_ready_pods(api_client: client.ApiClient, namespace: str) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    discovery = client.DiscoveryV1Api(api_client)
    template = workload("Deployment", "web", replicas=2)
    template["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"name": "http", "containerPort": 8080}]
    apps.create_namespaced_deployment(namespace, template)
    service = core.create_namespaced_service(
        namespace,
        _service(
            "web",
            "ClusterIP",
            selector={"app": "web"},
            ports=[{"name": "web", "port": 80, "targetPort": "http"}],
        ),
    )

    def addresses() -> set[str]:
        endpoints = core.list_namespaced_endpoints(namespace).items  # none until the controller made it
        return {a.ip for e in endpoints for s in e.subsets or [] for a in s.addresses or []}

    def pod_ips() -> set[str]:
        return {p.status.pod_ip for p in core.list_namespaced_pod(namespace, label_selector="app=web").items}

    wait_for(lambda: len(addresses()) == 2 and addresses() == pod_ips(), what="2 ready addresses")
    [subset] = core.read_namespaced_endpoints("web", namespace).subsets
    assert [(p.name, p.port, p.protocol) for p in subset.ports] == [("web", 8080, "TCP")]
    assert {a.target_ref.kind for a in subset.addresses} == {"Pod"}
    [endpoint_slice] = discovery.list_namespaced_endpoint_slice(namespace).items
    assert endpoint_slice.metadata.labels["kubernetes.io/service-name"] == "web"
    assert endpoint_slice.metadata.owner_references[0].uid == service.metadata.uid
    assert endpoint_slice.address_type == "IPv4"
    assert {e.addresses[0] for e in endpoint_slice.endpoints} == pod_ips()
    assert all(e.conditions.ready for e in endpoint_slice.endpoints)
    apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 1}})
    wait_for(lambda: len(addresses()) == 1 and addresses() == pod_ips(), what="1 address after scaling down")
    wait_for(
        lambda: (
            len(discovery.read_namespaced_endpoint_slice(endpoint_slice.metadata.name, namespace).endpoints)
            == 1
        ),
        what="the slice follows",
    )
    core.delete_namespaced_service("web", namespace, _preload_content=False)
    wait_for(lambda: not core.list_namespaced_endpoints(namespace).items, what="the Endpoints removed")
    wait_for(
        lambda: not discovery.list_namespaced_endpoint_slice(namespace).items, what="the slice collected"
    )


def test_no_simulate_runs_no_controllers(tmp_path_factory: pytest.TempPathFactory) -> None:
    for api in _client(tmp_path_factory, "--no-simulate"):
        core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
        assert core.list_node().items == []  # with the simulation the node exists before the server answers
        apps.create_namespaced_deployment("default", workload("Deployment", "idle", replicas=1))
        core.create_namespaced_service("default", _service("idle"))
        pod = core.create_namespaced_pod(
            "default",
            {"metadata": {"name": "idle"}, "spec": workload("Deployment", "x")["spec"]["template"]["spec"]},
        )
        assert apps.list_namespaced_replica_set("default").items == []
        assert core.read_namespaced_pod("idle", "default").spec.node_name is None
        assert pod.spec.node_name is None
        assert status_field(apps.read_namespaced_deployment("idle", "default"), "replicas") is None


def test_a_malformed_pool_is_refused_at_start(tmp_path: Path) -> None:
    syncflow = str(Path(sys.executable).parent / "syncflow")
    args = [syncflow, "devcluster", "--port", "0", "--kubeconfig", str(tmp_path / "kc")]
    result = subprocess.run(
        [*args, "--load-balancer-ips", "10.0.0.9-10.0.0.1"],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "Invalid value for --load-balancer-ips" in result.stderr and "before the first" in result.stderr
