"""Issue 10 item 3: ``?dryRun=All`` validates, defaults and answers, but stores nothing and sends no event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.support.devcluster import Kubectl


def _cm(name: str, **data: str) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data or None)


def _list_rv(core: client.CoreV1Api, namespace: str) -> str:
    return str(core.list_namespaced_config_map(namespace).metadata.resource_version)


def _events_after(core: client.CoreV1Api, namespace: str, rv: str) -> list[tuple[str, str]]:
    """Every watch event after ``rv`` up to the first one, which the caller made real (no sleeping)."""
    stream = watch.Watch().stream(
        core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=5
    )
    seen = []
    for event in stream:
        seen.append((event["type"], event["object"].metadata.name))
        break
    return seen


def test_dry_run_writes_of_the_official_client_keep_nothing(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _cm("kept", k="v1"))
    before = _list_rv(core, namespace)

    created = core.create_namespaced_config_map(namespace, _cm("ghost", k="v"), dry_run="All")
    assert created.metadata.name == "ghost" and created.metadata.uid and created.data == {"k": "v"}
    assert not created.metadata.resource_version
    replaced = core.replace_namespaced_config_map("kept", namespace, _cm("kept", k="replaced"), dry_run="All")
    assert replaced.data == {"k": "replaced"}
    patched = core.patch_namespaced_config_map("kept", namespace, {"data": {"k": "merged"}}, dry_run="All")
    assert patched.data == {"k": "merged"}
    json_patched = core.patch_namespaced_config_map(  # a list body goes as application/json-patch+json
        "kept", namespace, [{"op": "replace", "path": "/data/k", "value": "json"}], dry_run="All"
    )
    assert json_patched.data == {"k": "json"}
    core.delete_namespaced_config_map("kept", namespace, dry_run="All")

    assert _list_rv(core, namespace) == before
    kept = core.read_namespaced_config_map("kept", namespace)
    assert kept.data == {"k": "v1"} and kept.metadata.resource_version == before
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_config_map("ghost", namespace)
    assert missing.value.status == 404
    core.create_namespaced_config_map(namespace, _cm("real"))
    assert _events_after(core, namespace, before) == [("ADDED", "real")]


def test_dry_run_still_defaults_and_validates(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    service = client.V1Service(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)]),
    )
    shown = core.create_namespaced_service(namespace, service, dry_run="All")
    assert shown.spec.type == "ClusterIP" and shown.spec.cluster_ip and shown.spec.ports[0].protocol == "TCP"
    assert core.list_namespaced_service(namespace).items == []
    with pytest.raises(ApiException) as invalid:
        core.create_namespaced_config_map(namespace, _cm("Not_Valid"), dry_run="All")
    assert invalid.value.status == 422
    core.create_namespaced_config_map(namespace, _cm("exists"))
    with pytest.raises(ApiException) as exists:
        core.create_namespaced_config_map(namespace, _cm("exists"), dry_run="All")
    assert exists.value.status == 409


def test_dry_run_delete_of_held_object_and_namespace_changes_nothing(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    body = _cm("held")
    body.metadata.finalizers = ["example.com/hold"]
    core.create_namespaced_config_map(namespace, body)
    answer = core.delete_namespaced_config_map("held", namespace, dry_run="All", _preload_content=False)
    assert json.loads(answer.data)["metadata"]["deletionTimestamp"]  # what a real delete would answer
    assert core.read_namespaced_config_map("held", namespace).metadata.deletion_timestamp is None
    core.delete_namespace(namespace, dry_run="All")
    live = core.read_namespace(namespace)
    assert live.status.phase == "Active" and live.metadata.deletion_timestamp is None
    assert core.read_namespaced_config_map("held", namespace).metadata.deletion_timestamp is None
    core.delete_collection_namespaced_config_map(namespace, dry_run="All")
    remaining = core.list_namespaced_config_map(namespace).items
    assert [cm.metadata.name for cm in remaining] == ["held", "kube-root-ca.crt"]


def test_invalid_dry_run_value_is_refused_like_kube(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_config_map(namespace, _cm("x"), dry_run="Yes")
    status = json.loads(refused.value.body)
    assert refused.value.status == 422 and status["reason"] == "Invalid"
    assert status["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Yes"}: '
        'supported values: "All"'
    )
    # nothing was created: only the kube-root-ca.crt every namespace has
    assert [cm.metadata.name for cm in core.list_namespaced_config_map(namespace).items] == [
        "kube-root-ca.crt"
    ]


def test_kubectl_server_dry_run_create_apply_delete_leave_nothing(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\ndata:\n  k: v\n")
    out = kubectl.run("create", "-n", namespace, "-f", str(manifest), "--dry-run=server").stdout
    assert "configmap/dry created (server dry run)" in out
    assert kubectl.run("get", "-n", namespace, "configmap", "dry", check=False).returncode != 0
    out = kubectl.run("apply", "-n", namespace, "-f", str(manifest), "--dry-run=server").stdout
    assert "(server dry run)" in out
    assert kubectl.run("get", "-n", namespace, "configmap", "dry", check=False).returncode != 0

    kubectl.run("create", "-n", namespace, "-f", str(manifest))
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\ndata:\n  k: changed\n")
    kubectl.run("apply", "-n", namespace, "-f", str(manifest), "--dry-run=server")
    assert kubectl.json("get", "-n", namespace, "configmap", "dry")["data"] == {"k": "v"}
    out = kubectl.run("delete", "-n", namespace, "configmap", "dry", "--dry-run=server").stdout
    assert "deleted" in out and out.strip().endswith("(server dry run)")
    assert kubectl.json("get", "-n", namespace, "configmap", "dry")["data"] == {"k": "v"}
