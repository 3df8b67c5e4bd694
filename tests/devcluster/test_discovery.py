"""Point 1: discovery and the OpenAPI surface kubectl needs."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from kubernetes import client


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_version_and_core_discovery(api_client: client.ApiClient) -> None:
    version = client.VersionApi(api_client).get_code()
    assert version.major == "1" and version.git_version.startswith("v1.")
    assert client.CoreApi(api_client).get_api_versions().versions == ["v1"]
    core = client.CoreV1Api(api_client).get_api_resources()
    by_name = {r.name: r for r in core.resources}
    assert by_name["namespaces"].namespaced is False
    assert by_name["configmaps"].namespaced is True
    assert by_name["configmaps"].short_names == ["cm"]
    assert "services/status" in by_name and "namespaces/finalize" in by_name


def test_group_discovery(api_client: client.ApiClient) -> None:
    groups = {g.name: g for g in client.ApisApi(api_client).get_api_versions().groups}
    for name in (
        "apps",
        "coordination.k8s.io",
        "apiextensions.k8s.io",
        "rbac.authorization.k8s.io",
        "events.k8s.io",
    ):
        assert groups[name].preferred_version.version == "v1"
    apps = client.AppsV1Api(api_client).get_api_resources()
    names = {r.name: r for r in apps.resources}
    assert names["deployments/scale"].kind == "Scale" and names["deployments/scale"].group == "autoscaling"


def test_unknown_group_version_is_404(devcluster: Any) -> None:
    try:
        urllib.request.urlopen(devcluster.url + "/apis/nope.example.com/v1", timeout=10)
    except urllib.error.HTTPError as exc:
        body = json.loads(exc.read())
        assert exc.code == 404 and body["kind"] == "Status" and body["reason"] == "NotFound"
    else:
        raise AssertionError("expected 404")


def test_openapi_v3_declares_field_validation_for_every_kind(devcluster: Any) -> None:
    root = _get(devcluster.url + "/openapi/v3")
    assert "api/v1" in root["paths"] and "apis/apps/v1" in root["paths"]
    doc = _get(devcluster.url + root["paths"]["apis/apps/v1"]["serverRelativeURL"])
    patch_ops = [p["patch"] for p in doc["paths"].values() if "patch" in p]
    kinds = {op["x-kubernetes-group-version-kind"]["kind"] for op in patch_ops}
    assert "Deployment" in kinds
    assert all(any(p["name"] == "fieldValidation" for p in op["parameters"]) for op in patch_ops)


def test_api_resources_with_kubectl(kubectl: Any) -> None:
    out = kubectl.run("api-resources", "--no-headers").stdout
    rows = {line.split()[0] for line in out.splitlines()}
    assert {"configmaps", "deployments", "leases", "customresourcedefinitions", "roles"} <= rows
