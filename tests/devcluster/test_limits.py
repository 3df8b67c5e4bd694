"""Issue 10 item 9: kube's size limits (Secret/ConfigMap data, request bodies, etcd's value size)."""

from __future__ import annotations

import base64
import json
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.support.devcluster import Kubectl

MIB = 1024 * 1024


def _refusal(call: object) -> tuple[int, dict[str, object]]:
    assert callable(call)
    with pytest.raises(ApiException) as refused:
        call()
    return refused.value.status, json.loads(refused.value.body)


def test_configmap_and_secret_data_over_one_mib_are_invalid(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    half = "x" * (MIB // 2)
    at_limit = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="full"), data={"a": half, "b": half})
    assert core.create_namespaced_config_map(namespace, at_limit).metadata.uid
    over = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="big"), data={"a": half, "b": half + "y"})
    status, body = _refusal(lambda: core.create_namespaced_config_map(namespace, over))
    assert status == 422 and body["reason"] == "Invalid"
    assert body["message"] == 'ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes'

    encoded = base64.b64encode(b"\0" * (MIB + 1)).decode()
    secret = client.V1Secret(metadata=client.V1ObjectMeta(name="big"), data={"blob": encoded})
    status, body = _refusal(lambda: core.create_namespaced_secret(namespace, secret))
    assert status == 422
    assert body["message"] == 'Secret "big" is invalid: data: Too long: must have at most 1048576 bytes'
    names = [cm.metadata.name for cm in core.list_namespaced_config_map(namespace).items]
    assert "big" not in names and core.list_namespaced_secret(namespace).items == []


def test_request_body_over_three_mib_is_refused(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    huge = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="huge"), data={"a": "x" * (3 * MIB)})
    status, body = _refusal(lambda: core.create_namespaced_config_map(namespace, huge))
    assert status == 413
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Request entity too large: limit is 3145728",
        "reason": "RequestEntityTooLarge",
        "code": 413,
    }


def test_object_over_the_etcd_limit_is_refused_like_kube(
    api_client: client.ApiClient, kubectl: Kubectl, namespace: str
) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    open_schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    client.ApiextensionsV1Api(api_client).create_custom_resource_definition(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"blobs.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "blobs", "singular": "blob", "kind": "Blob"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {"openAPIV3Schema": open_schema},
                    }
                ],
            },
        }
    )
    objects = client.CustomObjectsApi(api_client)
    blob = {
        "apiVersion": f"{group}/v1",
        "kind": "Blob",
        "metadata": {"name": "b"},
        "spec": {"x": "y" * (2 * MIB)},
    }
    status, body = _refusal(
        lambda: objects.create_namespaced_custom_object(group, "v1", namespace, "blobs", blob)
    )
    assert status == 500
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "etcdserver: request is too large",
        "code": 500,
    }
    assert objects.list_namespaced_custom_object(group, "v1", namespace, "blobs")["items"] == []
    shown = kubectl.run("create", "-n", namespace, "-f", "-", stdin=json.dumps(blob), check=False)
    assert shown.returncode != 0
    assert (
        shown.stderr.strip()
        == 'Error from server: error when creating "STDIN": etcdserver: request is too large'
    )
