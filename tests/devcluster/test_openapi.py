"""Issue 10 item 5: OpenAPI v3 and v2 carry CRD schemas; kubectl explains and validates with them."""

from __future__ import annotations

import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from tests.support.devcluster import DevclusterProcess, Kubectl


def _crd(group: str) -> str:
    return f"""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: sprockets.{group}}}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: sprockets, singular: sprocket, kind: Sprocket}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: What the sprocket should be.
            properties:
              teeth: {{type: integer, description: How many teeth the sprocket has.}}
              finish: {{type: string}}
"""


def _get(url: str, accept: str = "application/json") -> Any:
    request = urllib.request.Request(url, headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _apply(kubectl: Kubectl, tmp_path: Path, manifest: str, *args: str, check: bool = True) -> Any:
    path = tmp_path / f"{uuid.uuid4().hex}.yaml"
    path.write_text(manifest)
    return kubectl.run("apply", "-f", str(path), *args, check=check)


def test_kubectl_explain_and_validation_see_crd_fields(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    group = f"{namespace}.example.com"
    _apply(kubectl, tmp_path, _crd(group))
    explained = kubectl.run("explain", f"sprockets.{group}.spec.teeth").stdout
    assert "How many teeth the sprocket has." in explained and "integer" in explained
    meta = f"metadata: {{name: a, namespace: {namespace}}}"
    good = f"apiVersion: {group}/v1\nkind: Sprocket\n{meta}\nspec: {{teeth: 12}}\n"
    assert "created" in _apply(kubectl, tmp_path, good).stdout
    bad = good.replace("name: a,", "name: b,").replace("teeth: 12", "teeth: 12, colour: red")
    refused = _apply(kubectl, tmp_path, bad, check=False)
    assert refused.returncode != 0 and 'unknown field "spec.colour"' in refused.stderr
    items = [
        {"apiVersion": f"{group}/v1", "kind": "Sprocket", "metadata": {"name": n, "namespace": namespace}}
        for n in ("c", "d")
    ]
    listed = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    assert _apply(kubectl, tmp_path, listed).stdout.count("created") == 2
    warned = _apply(kubectl, tmp_path, bad, "--validate=warn")
    assert 'unknown field "spec.colour"' in warned.stderr and "created" in warned.stdout


def test_openapi_v3_and_v2_describe_crds_and_builtins(
    devcluster: DevclusterProcess, kubectl: Kubectl, tmp_path: Path
) -> None:
    group = f"v{uuid.uuid4().hex[:8]}.example.com"
    _apply(kubectl, tmp_path, _crd(group))
    root = _get(devcluster.url + "/openapi/v3")
    doc = _get(devcluster.url + root["paths"][f"apis/{group}/v1"]["serverRelativeURL"])
    sprocket = doc["components"]["schemas"][f"com.example.{group.split('.', maxsplit=1)[0]}.v1.Sprocket"]
    assert sprocket["x-kubernetes-group-version-kind"] == [
        {"group": group, "version": "v1", "kind": "Sprocket"}
    ]
    assert sprocket["properties"]["spec"]["properties"]["teeth"]["type"] == "integer"
    apps = _get(devcluster.url + root["paths"]["apis/apps/v1"]["serverRelativeURL"])
    deployment = apps["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"][0]["kind"] == "Deployment"
    v2 = _get(devcluster.url + "/openapi/v2")
    assert v2["swagger"] == "2.0" and "io.k8s.api.core.v1.Pod" in v2["definitions"]
    assert any(
        d["x-kubernetes-group-version-kind"][0]["kind"] == "Sprocket"
        for n, d in v2["definitions"].items()
        if "x-kubernetes-group-version-kind" in d
    )
    protobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    request = urllib.request.Request(devcluster.url + "/openapi/v2", headers={"Accept": protobuf})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("application/com.github.proto-openapi.spec.v2")
        assert response.read().startswith(b"\n\x032.0")  # Document.swagger = "2.0"


def test_client_side_apply_of_builtins_stays_quiet(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    deployment = f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {namespace}}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: web, image: nginx:1.25}}, {{name: side, image: busybox}}]}}
"""
    _apply(kubectl, tmp_path, deployment)
    changed = _apply(kubectl, tmp_path, deployment.replace("nginx:1.25", "nginx:1.27"))
    assert "configured" in changed.stdout and changed.stderr == ""
    containers = kubectl.json("get", "deploy", "web", "-n", namespace)["spec"]["template"]["spec"][
        "containers"
    ]
    assert [c["image"] for c in containers] == ["nginx:1.27", "busybox"]
