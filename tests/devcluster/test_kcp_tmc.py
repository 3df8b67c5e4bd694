"""kcp mode plays kcp v0.11 for TMC: kcp's built-in set, root:compute's export, SyncTargets (issue 11)."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.support.devcluster import DevclusterProcess, Kubectl, start_devcluster
from tests.support.kcp import in_workspace, workspace_manifest
from tests.support.synctargets import SEED_SYNC_TARGET

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process

THRESHOLD = 3.0  # --sync-target-heartbeat-threshold of the test server, seconds
WORKLOAD = ("workload.kcp.io", "v1alpha1", "synctargets")
KUBERNETES_SCHEMAS = {
    "v124.deployments.apps",
    "v124.services.core",
    "v124.ingresses.networking.k8s.io",
    "v124.pods.core",
}
NGINX: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "labels": {"app": "nginx"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {
                "containers": [{"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]
            },
        },
    },
}


@pytest.fixture(scope="module")
def kcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    server = start_devcluster(
        tmp_path_factory.mktemp("kcp-tmc"), "--kcp", "--sync-target-heartbeat-threshold", str(THRESHOLD)
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def kubectl(kcp: DevclusterProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return Kubectl(kcp.kubeconfig, tmp_path_factory.mktemp("kcp-tmc-cache"))


def _api(server: DevclusterProcess, path: str) -> client.ApiClient:
    """The official client against ``<server><path>`` (a workspace or virtual workspace URL)."""
    configuration = client.Configuration()
    configuration.host = server.url + path
    return client.ApiClient(configuration)


def _json(kubectl: Kubectl, workspace: str, *args: str) -> Any:
    return json.loads(in_workspace(kubectl, workspace, *args, "-o", "json").stdout)


def _resource_names(kubectl: Kubectl, workspace: str) -> set[str]:
    listing = in_workspace(kubectl, workspace, "api-resources", "--no-headers", "-o", "name").stdout
    return set(listing.split())


@pytest.fixture(scope="module")
def alone(kubectl: Kubectl) -> str:
    """root:alone, a workspace that binds nothing."""
    kubectl.run("create", "-f", "-", stdin=workspace_manifest("alone"))
    return "root:alone"


@pytest.fixture(scope="module")
def bound(kubectl: Kubectl) -> str:
    """root:apps, a workspace that binds root:compute's kubernetes export."""
    kubectl.run("create", "-f", "-", stdin=workspace_manifest("apps"))
    binding = {
        "apiVersion": "apis.kcp.io/v1alpha1",
        "kind": "APIBinding",
        "metadata": {"name": "kubernetes"},
        "spec": {"reference": {"export": {"path": "root:compute", "name": "kubernetes"}}},
    }
    in_workspace(kubectl, "root:apps", "apply", "-f", "-", stdin=json.dumps(binding))
    return "root:apps"


def test_a_workspace_alone_serves_only_kcps_built_in_types(
    kubectl: Kubectl, kcp: DevclusterProcess, alone: str
) -> None:
    names = _resource_names(kubectl, alone)
    assert {
        "namespaces",
        "configmaps",
        "secrets",
        "serviceaccounts",
        "events",
        "events.events.k8s.io",
        "leases.coordination.k8s.io",
        "roles.rbac.authorization.k8s.io",
        "clusterrolebindings.rbac.authorization.k8s.io",
        "customresourcedefinitions.apiextensions.k8s.io",
        "workspaces.tenancy.kcp.io",
        "apibindings.apis.kcp.io",
        "logicalclusters.core.kcp.io",
        "synctargets.workload.kcp.io",
    } <= names
    assert not {n.split(".")[0] for n in names} & {"deployments", "services", "pods", "ingresses"}
    missing = in_workspace(kubectl, alone, "get", "deployments", check=False)
    assert (
        missing.returncode != 0 and 'the server doesn\'t have a resource type "deployments"' in missing.stderr
    )
    apps = client.AppsV1Api(_api(kcp, f"/clusters/{alone}"))
    with pytest.raises(ApiException) as not_served:
        apps.list_namespaced_deployment("default")
    assert not_served.value.status == 404
    with pytest.raises(ApiException) as no_services:
        client.CoreV1Api(_api(kcp, f"/clusters/{alone}")).list_namespaced_service("default")
    assert no_services.value.status == 404


def test_root_compute_exports_kubernetes_like_kcp_v0_11(kubectl: Kubectl) -> None:
    assert "compute" in {w["metadata"]["name"] for w in _json(kubectl, "root", "get", "workspaces")["items"]}
    export = _json(kubectl, "root:compute", "get", "apiexport", "kubernetes")
    assert set(export["spec"]["latestResourceSchemas"]) == KUBERNETES_SCHEMAS
    assert len(export["status"]["identityHash"]) == 64
    schemas = {
        s["metadata"]["name"]: s for s in _json(kubectl, "root:compute", "get", "apiresourceschemas")["items"]
    }
    assert set(schemas) == KUBERNETES_SCHEMAS
    subresources = schemas["v124.deployments.apps"]["spec"]["versions"][0]["subresources"]
    assert set(subresources) == {"status", "scale"}
    assert "status" in schemas["v124.services.core"]["spec"]["versions"][0]["subresources"]
    roles = {r["metadata"]["name"] for r in _json(kubectl, "root:compute", "get", "clusterroles")["items"]}
    assert "compute:apiexport:kubernetes:bind" in roles


def test_binding_root_compute_kubernetes_serves_deployments_and_services(
    kubectl: Kubectl, kcp: DevclusterProcess, bound: str, alone: str
) -> None:
    binding = _json(kubectl, bound, "get", "apibinding", "kubernetes")
    assert binding["status"]["phase"] == "Bound"
    assert {r["resource"] for r in binding["status"]["boundResources"]} == {
        "deployments",
        "services",
        "ingresses",
        "pods",
    }
    assert {"deployments.apps", "services", "ingresses.networking.k8s.io", "pods"} <= _resource_names(
        kubectl, bound
    )
    created = in_workspace(kubectl, bound, "apply", "-f", "-", stdin=json.dumps(NGINX))
    assert "deployment.apps/nginx created" in created.stdout
    scaled = {**NGINX, "spec": {**NGINX["spec"], "replicas": 3}}
    updated = in_workspace(kubectl, bound, "apply", "-f", "-", stdin=json.dumps(scaled))
    assert "deployment.apps/nginx configured" in updated.stdout
    nginx = _json(kubectl, bound, "get", "deployment", "nginx")
    assert (nginx["spec"]["replicas"], nginx["metadata"]["generation"]) == (3, 2)

    workspace = _api(kcp, f"/clusters/{bound}")
    client.CoreV1Api(workspace).create_namespaced_service(
        "default",
        {"metadata": {"name": "web"}, "spec": {"selector": {"app": "nginx"}, "ports": [{"port": 80}]}},
    )
    service = _json(kubectl, bound, "get", "service", "web")
    assert service["spec"]["ports"][0]["protocol"] == "TCP"  # the schema's default
    apps = client.AppsV1Api(workspace)
    apps.patch_namespaced_deployment_status("nginx", "default", {"status": {"readyReplicas": 3}})
    nginx = apps.read_namespaced_deployment("nginx", "default")
    assert nginx.status.ready_replicas == 3 and nginx.spec.replicas == 3
    assert "nginx" not in in_workspace(kubectl, alone, "get", "all", "--no-headers", check=False).stdout


def test_kubernetes_export_virtual_workspace_lists_across_bindings(
    kubectl: Kubectl, kcp: DevclusterProcess, bound: str
) -> None:
    in_workspace(kubectl, bound, "apply", "-f", "-", stdin=json.dumps(NGINX))
    endpoint_slice = _json(kubectl, "root:compute", "get", "apiexportendpointslice", "kubernetes")
    (url,) = [e["url"] for e in endpoint_slice["status"]["endpoints"]]
    bound_cluster = _json(kubectl, bound, "get", "logicalcluster", "cluster")["metadata"]["annotations"][
        "kcp.io/cluster"
    ]
    vw = client.AppsV1Api(_api(kcp, url.removeprefix(kcp.url) + "/clusters/*"))
    seen = {
        (d.metadata.annotations["kcp.io/cluster"], d.metadata.name)
        for d in vw.list_deployment_for_all_namespaces().items
    }
    assert (bound_cluster, "nginx") in seen


def test_sync_targets_are_served_in_every_workspace(kubectl: Kubectl, alone: str, bound: str) -> None:
    in_workspace(kubectl, alone, "apply", "-f", "-", stdin=json.dumps(SEED_SYNC_TARGET))
    listed = in_workspace(kubectl, alone, "get", "synctargets").stdout
    assert listed.split()[:3] == ["NAME", "READY", "HEARTBEAT"] and "east" in listed
    stored = _json(kubectl, alone, "get", "synctarget", "east")
    assert stored["spec"] == SEED_SYNC_TARGET["spec"]
    assert _json(kubectl, bound, "get", "synctargets")["items"] == []
    invalid = {
        **SEED_SYNC_TARGET,
        "metadata": {"name": "bad"},
        "spec": {"supportedAPIExports": [{"export": ""}]},
    }
    refused = in_workspace(kubectl, alone, "create", "-f", "-", stdin=json.dumps(invalid), check=False)
    assert refused.returncode != 0 and "spec.supportedAPIExports[0].export" in refused.stderr


def _conditions(target: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {c["type"]: c for c in (target.get("status") or {}).get("conditions") or []}


def _heartbeat(objects: client.CustomObjectsApi, name: str) -> str:
    """Send a heartbeat as the syncer does; returns the resourceVersion before it."""
    before = objects.get_cluster_custom_object(*WORKLOAD, name)["metadata"]["resourceVersion"]
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    objects.patch_cluster_custom_object_status(*WORKLOAD, name, {"status": {"lastHeartbeatTime": now}})
    return str(before)


def _watch_until(
    objects: client.CustomObjectsApi, name: str, since: str, heartbeat_ready: str, timeout: float
) -> dict[str, Any]:
    """The first version of the SyncTarget after ``since`` whose HeartbeatReady has that status."""
    stream = watch.Watch()
    for event in stream.stream(
        objects.list_cluster_custom_object,
        *WORKLOAD,
        field_selector=f"metadata.name={name}",
        resource_version=since,
        timeout_seconds=int(timeout),
    ):
        if _conditions(event["object"]).get("HeartbeatReady", {}).get("status") == heartbeat_ready:
            stream.stop()
            return dict(event["object"])
    pytest.fail(f"no version of {name} with HeartbeatReady={heartbeat_ready} within {timeout}s")


def test_heartbeat_threshold_flips_heartbeat_ready_and_ready(
    kubectl: Kubectl, kcp: DevclusterProcess, bound: str
) -> None:
    in_workspace(kubectl, bound, "apply", "-f", "-", stdin=json.dumps(SEED_SYNC_TARGET))
    objects = client.CustomObjectsApi(_api(kcp, f"/clusters/{bound}"))
    never = _conditions(objects.get_cluster_custom_object(*WORKLOAD, "east"))
    assert never["HeartbeatReady"]["status"] == "False" and never["Ready"]["status"] == "False"
    assert never["HeartbeatReady"]["message"] == "No heartbeat yet seen"

    beat = time.monotonic()
    fresh = _watch_until(objects, "east", _heartbeat(objects, "east"), "True", timeout=10)
    assert _conditions(fresh)["Ready"]["status"] == "True"

    since = fresh["metadata"]["resourceVersion"]
    stale = _conditions(_watch_until(objects, "east", since, "False", timeout=THRESHOLD + 10))
    assert time.monotonic() - beat >= THRESHOLD
    assert stale["HeartbeatReady"]["reason"] == "ErrorHeartbeat"
    assert stale["HeartbeatReady"]["message"].startswith("No heartbeat since ")
    assert f"more than {THRESHOLD:g}s ago" in stale["HeartbeatReady"]["message"]
    assert (stale["Ready"]["status"], stale["Ready"]["reason"]) == ("False", "ErrorHeartbeat")
    row = in_workspace(kubectl, bound, "get", "synctarget", "east", "--no-headers").stdout.split()
    assert row[:2] == ["east", "False"]

    again = _watch_until(objects, "east", _heartbeat(objects, "east"), "True", timeout=10)
    assert _conditions(again)["Ready"]["status"] == "True"
