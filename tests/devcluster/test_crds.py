"""Point 3: CRDs start and stop serving their resources; schemas prune, default and validate."""

from __future__ import annotations

import http.client
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from tests.support.devcluster import DevclusterProcess

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1},
                "mode": {"type": "string", "enum": ["fast", "slow"], "default": "slow"},
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def _crd(group: str, scope: str = "Namespaced", versions: tuple[str, ...] = ("v1",)) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": i == 0,
                    "schema": {"openAPIV3Schema": SCHEMA},
                    "subresources": {
                        "status": {},
                        "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"},
                    },
                }
                for i, v in enumerate(versions)
            ],
        },
    }


@pytest.fixture
def group() -> str:
    return f"g{uuid.uuid4().hex[:8]}.example.com"


@pytest.fixture
def crds(api_client: client.ApiClient) -> Iterator[client.ApiextensionsV1Api]:
    yield client.ApiextensionsV1Api(api_client)


def _thing(group: str, version: str, name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{group}/{version}", "kind": "Thing", "metadata": {"name": name}, "spec": spec}


def test_crd_is_established_and_served(
    crds: client.ApiextensionsV1Api, api_client: client.ApiClient, group: str, namespace: str
) -> None:
    created = crds.create_custom_resource_definition(_crd(group, versions=("v1", "v2")))
    conditions = {c.type: c.status for c in created.status.conditions}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    objects = client.CustomObjectsApi(api_client)
    objects.create_namespaced_custom_object(
        group, "v1", namespace, "things", _thing(group, "v1", "t1", size=2)
    )
    as_v2 = objects.get_namespaced_custom_object(group, "v2", namespace, "things", "t1")
    assert as_v2["apiVersion"] == f"{group}/v2" and as_v2["spec"] == {"size": 2, "mode": "slow"}
    assert as_v2["metadata"]["generation"] == 1


def test_cluster_scoped_crd(
    crds: client.ApiextensionsV1Api, api_client: client.ApiClient, group: str
) -> None:
    crds.create_custom_resource_definition(_crd(group, scope="Cluster"))
    objects = client.CustomObjectsApi(api_client)
    created = objects.create_cluster_custom_object(
        group, "v1", "things", _thing(group, "v1", "global", size=1)
    )
    assert "namespace" not in created["metadata"]
    assert [
        i["metadata"]["name"] for i in objects.list_cluster_custom_object(group, "v1", "things")["items"]
    ] == ["global"]


def test_schema_validation_and_pruning(
    crds: client.ApiextensionsV1Api, api_client: client.ApiClient, group: str, namespace: str
) -> None:
    crds.create_custom_resource_definition(_crd(group))
    objects = client.CustomObjectsApi(api_client)
    with pytest.raises(ApiException) as invalid:
        objects.create_namespaced_custom_object(
            group, "v1", namespace, "things", _thing(group, "v1", "bad", size=0, mode="warp")
        )
    body = json.loads(invalid.value.body)
    assert invalid.value.status == 422
    assert {c["field"] for c in body["details"]["causes"]} == {"spec.size", "spec.mode"}
    with pytest.raises(ApiException) as missing:
        objects.create_namespaced_custom_object(
            group, "v1", namespace, "things", _thing(group, "v1", "empty")
        )
    assert missing.value.status == 422 and "Required value" in missing.value.body
    pruned = objects.create_namespaced_custom_object(
        group, "v1", namespace, "things", _thing(group, "v1", "p", size=1, unknown="x")
    )
    assert pruned["spec"] == {"size": 1, "mode": "slow"}


def test_custom_status_and_scale_subresources(
    crds: client.ApiextensionsV1Api, api_client: client.ApiClient, group: str, namespace: str
) -> None:
    crds.create_custom_resource_definition(_crd(group))
    objects = client.CustomObjectsApi(api_client)
    objects.create_namespaced_custom_object(
        group, "v1", namespace, "things", _thing(group, "v1", "s", size=1)
    )
    objects.patch_namespaced_custom_object_status(
        group, "v1", namespace, "things", "s", {"status": {"size": 1, "phase": "Ready"}}
    )
    ignored = objects.patch_namespaced_custom_object(
        group, "v1", namespace, "things", "s", {"status": {"phase": "Hacked"}, "spec": {"size": 2}}
    )
    assert ignored["status"]["phase"] == "Ready" and ignored["metadata"]["generation"] == 2
    scale = objects.get_namespaced_custom_object_scale(group, "v1", namespace, "things", "s")
    assert scale["spec"]["replicas"] == 2 and scale["status"]["replicas"] == 1
    objects.patch_namespaced_custom_object_scale(
        group, "v1", namespace, "things", "s", {"spec": {"replicas": 5}}
    )
    assert objects.get_namespaced_custom_object(group, "v1", namespace, "things", "s")["spec"]["size"] == 5


def test_deleting_crd_removes_objects_and_stops_serving(
    crds: client.ApiextensionsV1Api, api_client: client.ApiClient, group: str, namespace: str
) -> None:
    crds.create_custom_resource_definition(_crd(group))
    objects = client.CustomObjectsApi(api_client)
    held = _thing(group, "v1", "held", size=1)
    held["metadata"]["finalizers"] = ["example.com/hold"]
    objects.create_namespaced_custom_object(group, "v1", namespace, "things", held)
    objects.create_namespaced_custom_object(
        group, "v1", namespace, "things", _thing(group, "v1", "free", size=1)
    )
    crds.delete_custom_resource_definition(f"things.{group}")
    terminating = crds.read_custom_resource_definition(f"things.{group}")
    assert terminating.metadata.deletion_timestamp is not None
    remaining = objects.list_namespaced_custom_object(group, "v1", namespace, "things")["items"]
    assert [o["metadata"]["name"] for o in remaining] == ["held"]
    objects.patch_namespaced_custom_object(
        group, "v1", namespace, "things", "held", {"metadata": {"finalizers": None}}
    )
    with pytest.raises(ApiException) as gone:
        crds.read_custom_resource_definition(f"things.{group}")
    assert gone.value.status == 404
    with pytest.raises(ApiException) as unserved:
        objects.list_namespaced_custom_object(group, "v1", namespace, "things")
    assert unserved.value.status == 404


def test_deleting_a_crd_ends_its_watches(
    crds: client.ApiextensionsV1Api,
    api_client: client.ApiClient,
    devcluster: DevclusterProcess,
    group: str,
    namespace: str,
) -> None:
    """A watch of a custom resource sees its objects deleted with the CRD, then its stream ends, as
    kube-apiserver ends the watches of a resource it stops serving."""
    crds.create_custom_resource_definition(_crd(group))
    objects = client.CustomObjectsApi(api_client)
    objects.create_namespaced_custom_object(
        group, "v1", namespace, "things", _thing(group, "v1", "t", size=1)
    )
    host, port = devcluster.url.removeprefix("http://").split(":")
    watching = http.client.HTTPConnection(host, int(port), timeout=20)
    try:
        watching.request("GET", f"/apis/{group}/v1/namespaces/{namespace}/things?watch=1&timeoutSeconds=300")
        stream = watching.getresponse()
        assert stream.status == 200
        crds.delete_custom_resource_definition(f"things.{group}")
        events = [json.loads(line) for line in stream.read().splitlines() if line.strip()]
    finally:
        watching.close()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "t"),
        ("DELETED", "t"),
    ]


def test_dynamic_client_discovers_new_crd(
    crds: client.ApiextensionsV1Api, api_client: client.ApiClient, group: str, namespace: str
) -> None:
    crds.create_custom_resource_definition(_crd(group))
    dyn = dynamic.DynamicClient(api_client)
    things = dyn.resources.get(api_version=f"{group}/v1", kind="Thing")
    things.create(body=_thing(group, "v1", "dyn", size=3), namespace=namespace)
    got = things.get(name="dyn", namespace=namespace)
    assert got.spec.size == 3
    patched = things.patch(
        name="dyn",
        namespace=namespace,
        body={"spec": {"size": 4}},
        content_type="application/merge-patch+json",
    )
    assert patched.spec.size == 4
    with pytest.raises(ResourceNotFoundError):
        dyn.resources.get(api_version=f"{group}/v9", kind="Thing")


def test_invalid_crd_is_rejected(crds: client.ApiextensionsV1Api) -> None:
    bad = _crd("nodot")
    with pytest.raises(ApiException) as invalid:
        crds.create_custom_resource_definition(bad)
    assert invalid.value.status == 422 and "spec.group" in invalid.value.body
