"""Issue 10 item 4: server-side apply and managedFields through kubectl, the official client and lightkube."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from lightkube import ApiError, Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import ConfigMap

from tests.support.devcluster import DevclusterProcess, Kubectl

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {app: demo}
data:
  a: "1"
  b: "2"
"""


def _managed(api_client: client.ApiClient, namespace: str, name: str) -> dict[tuple[str, str], Any]:
    cm = client.CoreV1Api(api_client).read_namespaced_config_map(name, namespace)
    return {(m.manager, m.operation): m.fields_v1 for m in cm.metadata.managed_fields or []}


@pytest.fixture
def lightkube_client(devcluster: DevclusterProcess, namespace: str) -> Iterator[Client]:
    lk = Client(
        KubeConfig.from_file(devcluster.kubeconfig), namespace=namespace, field_manager="lightkube-test"
    )
    yield lk
    lk.close()


def test_kubectl_server_side_apply_creates_and_records_its_fields(
    kubectl: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    out = kubectl.run("apply", "--server-side", "-n", namespace, "-f", "-", stdin=CONFIGMAP).stdout
    assert out.strip() == "configmap/settings serverside-applied"
    assert _managed(api_client, namespace, "settings") == {
        ("kubectl", "Apply"): {
            "f:data": {"f:a": {}, "f:b": {}},
            "f:metadata": {"f:labels": {"f:app": {}}},
        }
    }


def test_conflicts_are_refused_unless_forced(
    kubectl: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    kubectl.run("apply", "--server-side", "-n", namespace, "-f", "-", stdin=CONFIGMAP)
    kubectl.run("patch", "-n", namespace, "configmap", "settings", "-p", '{"data":{"a":"patched"}}')
    refused = kubectl.run("apply", "--server-side", "-n", namespace, "-f", "-", stdin=CONFIGMAP, check=False)
    assert refused.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl-patch" using v1 at ' in refused.stderr
    assert refused.stderr.split("\n")[0].endswith(": .data.a")
    core = client.CoreV1Api(api_client)
    assert core.read_namespaced_config_map("settings", namespace).data["a"] == "patched"
    kubectl.run("apply", "--server-side", "--force-conflicts", "-n", namespace, "-f", "-", stdin=CONFIGMAP)
    assert core.read_namespaced_config_map("settings", namespace).data["a"] == "1"
    managed = _managed(api_client, namespace, "settings")
    assert ("kubectl-patch", "Update") not in managed  # it lost its only field
    assert managed[("kubectl", "Apply")]["f:data"] == {"f:a": {}, "f:b": {}}


def test_fields_dropped_from_the_configuration_are_removed_unless_shared(
    kubectl: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    kubectl.run("apply", "--server-side", "-n", namespace, "-f", "-", stdin=CONFIGMAP)
    other = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {b: '2'}\n"
    kubectl.run("apply", "--server-side", "--field-manager", "other", "-n", namespace, "-f", "-", stdin=other)
    smaller = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {}\n"
    kubectl.run("apply", "--server-side", "-n", namespace, "-f", "-", stdin=smaller)
    cm = client.CoreV1Api(api_client).read_namespaced_config_map("settings", namespace)
    assert cm.data == {"b": "2"} and not cm.metadata.labels


def test_apply_requires_a_field_manager_and_validates(api_client: client.ApiClient, namespace: str) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": "v"}}
    core = client.CoreV1Api(api_client)
    with pytest.raises(ApiException) as no_manager:
        core.patch_namespaced_config_map("x", namespace, body, _content_type="application/apply-patch+yaml")
    assert no_manager.value.status == 422
    assert json.loads(no_manager.value.body)["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    bad = {**body, "metadata": {"name": "Not_Valid"}}
    with pytest.raises(ApiException) as invalid:
        core.patch_namespaced_config_map(
            "Not_Valid", namespace, bad, field_manager="m", _content_type="application/apply-patch+yaml"
        )
    assert invalid.value.status == 422
    applied = core.patch_namespaced_config_map(
        "x", namespace, body, field_manager="m", _content_type="application/apply-patch+yaml"
    )
    assert applied.data == {"k": "v"} and applied.metadata.managed_fields[0].operation == "Apply"


def test_updates_record_update_entries_with_kube_default_manager_names(
    kubectl: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "made"}, "data": {"k": "v"}})
    (manager, operation), fields = next(iter(_managed(api_client, namespace, "made").items()))
    assert manager == api_client.user_agent.split("/")[0] and operation == "Update"
    assert fields == {"f:data": {"f:k": {}}}
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: csa}\ndata: {k: v}\n"
    kubectl.run("apply", "-n", namespace, "-f", "-", stdin=manifest)
    kubectl.run("apply", "-n", namespace, "-f", "-", stdin=manifest.replace("k: v", "k: w"))
    managers = {m for m, _ in _managed(api_client, namespace, "csa")}
    assert managers == {"kubectl-client-side-apply"}
    kubectl.run("label", "-n", namespace, "configmap", "csa", "x=y")
    assert ("kubectl-label", "Update") in _managed(api_client, namespace, "csa")


def test_kubectl_diff_uses_server_dry_run_and_changes_nothing(
    kubectl: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    kubectl.run("apply", "--server-side", "-n", namespace, "-f", "-", stdin=CONFIGMAP)
    changed = CONFIGMAP.replace('a: "1"', 'a: "3"')
    for mode in ("--server-side=true", "--server-side=false"):
        diff = kubectl.run("diff", mode, "-n", namespace, "-f", "-", stdin=changed, check=False)
        assert diff.returncode == 1, diff.stderr  # 1: differences found
        assert '-  a: "1"' in diff.stdout and '+  a: "3"' in diff.stdout
    assert client.CoreV1Api(api_client).read_namespaced_config_map("settings", namespace).data["a"] == "1"
    same = kubectl.run("diff", "--server-side", "-n", namespace, "-f", "-", stdin=CONFIGMAP, check=False)
    assert same.returncode == 0 and same.stdout == ""


def test_lightkube_apply_creates_updates_and_conflicts(
    lightkube_client: Client, api_client: client.ApiClient, namespace: str
) -> None:
    cm = ConfigMap(metadata=ObjectMeta(name="lk"), data={"k": "v"})
    created = lightkube_client.apply(cm)
    assert created.data == {"k": "v"} and created.metadata.managedFields[0].manager == "lightkube-test"
    updated = lightkube_client.apply(ConfigMap(metadata=ObjectMeta(name="lk"), data={"k": "v", "x": "y"}))
    assert updated.data == {"k": "v", "x": "y"}
    with pytest.raises(ApiError) as conflict:
        lightkube_client.apply(
            ConfigMap(metadata=ObjectMeta(name="lk"), data={"k": "other"}), field_manager="rival"
        )
    assert conflict.value.status.code == 409
    forced = lightkube_client.apply(
        ConfigMap(metadata=ObjectMeta(name="lk"), data={"k": "other"}), field_manager="rival", force=True
    )
    assert forced.data == {"k": "other", "x": "y"}
    deployment = Deployment.from_dict(
        {
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "main", "image": "nginx"}]},
                },
            },
        }
    )
    lightkube_client.apply(deployment)
    sidecar = Deployment.from_dict(
        {
            "metadata": {"name": "web"},
            "spec": {  # the same selector (co-owned), and one more container
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "sidecar", "image": "envoy"}]}},
            },
        }
    )
    merged = lightkube_client.apply(sidecar, field_manager="injector")
    assert [c.name for c in merged.spec.template.spec.containers] == ["main", "sidecar"]


def test_custom_resources_merge_by_their_list_map_keys(
    api_client: client.ApiClient, kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    group = f"ssa{namespace.removeprefix('t-')}.example.com"
    spec = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "rules": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}, "allow": {"type": "boolean"}},
                        },
                    }
                },
            }
        },
    }
    client.ApiextensionsV1Api(api_client).create_custom_resource_definition(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"policies.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "policies", "singular": "policy", "kind": "Policy"},
                "versions": [
                    {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": spec}}
                ],
            },
        }
    )

    def policy(rule: str) -> str:
        return json.dumps(
            {
                "apiVersion": f"{group}/v1",
                "kind": "Policy",
                "metadata": {"name": "p"},
                "spec": {"rules": [{"name": rule, "allow": True}]},
            }
        )

    for manager, rule in (("team-a", "a"), ("team-b", "b")):
        kubectl.run(
            "apply",
            "--server-side",
            "--field-manager",
            manager,
            "-n",
            namespace,
            "-f",
            "-",
            stdin=policy(rule),
        )
    got = kubectl.json("get", "-n", namespace, f"policies.{group}", "p")
    assert [r["name"] for r in got["spec"]["rules"]] == ["a", "b"]
