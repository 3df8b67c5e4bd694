"""The user paths of the issue, driven with the real kubectl binary."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.devcluster import Kubectl
from tests.support.lines import LineReader

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.kubectl.example.com
spec:
  group: kubectl.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"""

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
      - name: sidecar
        image: busybox
"""


def _apply(kubectl: Kubectl, namespace: str, manifest: str, tmp_path: Path) -> str:
    path = tmp_path / "manifest.yaml"
    path.write_text(manifest)
    return kubectl.run("apply", "-n", namespace, "-f", str(path)).stdout


def test_apply_configmap_change_and_reapply(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue, size: m}\n"
    assert "configmap/settings created" in _apply(kubectl, namespace, manifest, tmp_path)
    changed = manifest.replace("blue", "green").replace(", size: m", "")
    assert "configmap/settings configured" in _apply(kubectl, namespace, changed, tmp_path)
    assert kubectl.json("get", "cm", "settings", "-n", namespace)["data"] == {"color": "green"}
    assert "unchanged" in _apply(kubectl, namespace, changed, tmp_path)


def test_apply_deployment_uses_strategic_merge(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    _apply(kubectl, namespace, DEPLOYMENT, tmp_path)
    before = kubectl.json("get", "deploy", "web", "-n", namespace)
    changed = DEPLOYMENT.replace("nginx:1.25", "nginx:1.27").replace(', {name: B, value: "2"}', "")
    assert "deployment.apps/web configured" in _apply(kubectl, namespace, changed, tmp_path)
    after = kubectl.json("get", "deploy", "web", "-n", namespace)
    containers = {c["name"]: c for c in after["spec"]["template"]["spec"]["containers"]}
    assert containers["web"]["image"] == "nginx:1.27"
    assert containers["web"]["env"] == [{"name": "A", "value": "1"}]
    assert containers["sidecar"]["image"] == "busybox"
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1


def test_crd_create_wait_and_custom_resource(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    crd = tmp_path / "crd.yaml"
    crd.write_text(CRD)
    kubectl.run("create", "-f", str(crd))
    kubectl.run("wait", "--for=condition=Established", "crd/gadgets.kubectl.example.com", "--timeout=10s")
    resources = kubectl.run("api-resources", "--api-group=kubectl.example.com", "--no-headers").stdout
    assert resources.split()[:3] == ["gadgets", "gd", "kubectl.example.com/v1"]
    _apply(
        kubectl,
        namespace,
        "apiVersion: kubectl.example.com/v1\nkind: Gadget\nmetadata: {name: g1}\n"
        "spec: {size: 3, color: red}\n",
        tmp_path,
    )
    table = kubectl.run("get", "gd", "-n", namespace).stdout.splitlines()
    assert table[0].split() == ["NAME", "SIZE"] and table[1].split() == ["g1", "3"]
    kubectl.run("patch", "gd", "g1", "-n", namespace, "--type", "merge", "-p", '{"spec":{"size":4}}')
    kubectl.run(
        "patch",
        "gd",
        "g1",
        "-n",
        namespace,
        "--type",
        "json",
        "-p",
        '[{"op":"replace","path":"/spec/color","value":"blue"}]',
    )
    assert kubectl.json("get", "gd", "g1", "-n", namespace)["spec"] == {"size": 4, "color": "blue"}
    refused = kubectl.run(
        "patch", "gd", "g1", "-n", namespace, "--type", "strategic", "-p", '{"spec":{"size":5}}', check=False
    )
    assert (
        refused.returncode != 0 and "UnsupportedMediaType" in refused.stderr
    ) or "not supported" in refused.stderr


def test_patch_types_on_builtin(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    _apply(kubectl, namespace, DEPLOYMENT, tmp_path)
    kubectl.run(
        "patch",
        "deploy",
        "web",
        "-n",
        namespace,
        "--type",
        "strategic",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}}',
    )
    kubectl.run("patch", "deploy", "web", "-n", namespace, "--type", "merge", "-p", '{"spec":{"replicas":4}}')
    kubectl.run(
        "patch",
        "deploy",
        "web",
        "-n",
        namespace,
        "--type",
        "json",
        "-p",
        '[{"op":"add","path":"/metadata/labels","value":{"tier":"front"}}]',
    )
    got = kubectl.json("get", "deploy", "web", "-n", namespace)
    containers = {c["name"]: c["image"] for c in got["spec"]["template"]["spec"]["containers"]}
    assert containers == {"web": "nginx:2", "sidecar": "busybox"}
    assert got["spec"]["replicas"] == 4 and got["metadata"]["labels"] == {"tier": "front"}
    kubectl.run("scale", "deploy", "web", "-n", namespace, "--replicas=1")
    assert kubectl.json("get", "deploy", "web", "-n", namespace)["spec"]["replicas"] == 1


def test_delete_with_finalizer_waits_for_its_removal(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    _apply(
        kubectl,
        namespace,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\n",
        tmp_path,
    )
    kubectl.run("delete", "cm", "held", "-n", namespace, "--wait=false")
    held = kubectl.json("get", "cm", "held", "-n", namespace)
    assert held["metadata"]["deletionTimestamp"]
    kubectl.run(
        "patch",
        "cm",
        "held",
        "-n",
        namespace,
        "--type",
        "json",
        "-p",
        '[{"op":"remove","path":"/metadata/finalizers"}]',
    )
    gone = kubectl.run("get", "cm", "held", "-n", namespace, check=False)
    assert gone.returncode != 0 and 'configmaps "held" not found' in gone.stderr


def test_get_watch_shows_later_change(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run(
        "create",
        "-n",
        namespace,
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n",
    )
    watcher = kubectl.popen("get", "cm", "-n", namespace, "-w", "--output-watch-events")
    try:
        reader = LineReader(watcher.stdout)
        reader.until("first", 15)
        kubectl.run(
            "create",
            "-n",
            namespace,
            "-f",
            "-",
            stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: later}\n",
        )
        lines = reader.until("later", 15)
        assert lines[-1].split()[:2] == ["ADDED", "later"]
    finally:
        watcher.kill()
        watcher.wait()


def test_kubectl_wait_for_delete(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run(
        "create",
        "-n",
        namespace,
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: doomed, finalizers: [x.io/f]}\n",
    )
    kubectl.run("delete", "cm", "doomed", "-n", namespace, "--wait=false")
    waiter = kubectl.popen("wait", "--for=delete", "cm/doomed", "-n", namespace, "--timeout=20s")
    try:
        kubectl.run(
            "patch",
            "cm",
            "doomed",
            "-n",
            namespace,
            "--type",
            "merge",
            "-p",
            json.dumps({"metadata": {"finalizers": None}}),
        )
        assert waiter.wait(timeout=20) == 0
    finally:
        waiter.kill()


def test_kubectl_reports_kube_style_errors(kubectl: Kubectl, namespace: str) -> None:
    missing = kubectl.run("get", "cm", "nope", "-n", namespace, check=False)
    assert 'Error from server (NotFound): configmaps "nope" not found' in missing.stderr
    kubectl.run(
        "create", "-n", namespace, "-f", "-", stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\n"
    )
    dup = kubectl.run(
        "create",
        "-n",
        namespace,
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\n",
        check=False,
    )
    assert (
        "Error from server (AlreadyExists)" in dup.stderr and 'configmaps "dup" already exists' in dup.stderr
    )
    bad = kubectl.run(
        "create",
        "-n",
        namespace,
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n",
        check=False,
    )
    assert "is invalid" in bad.stderr and 'metadata.name: Invalid value: "Bad_Name"' in bad.stderr
