"""Points 2, 4 and 5: built-in resources, CRUD semantics and the status subresource (official client)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


def _cm(name: str, **data: str) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data or None)


def _deployment(name: str, image: str = "nginx", replicas: int = 1) -> client.V1Deployment:
    labels = {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[client.V1Container(name="main", image=image)]),
            ),
        ),
    )


def test_initial_namespaces_exist(api_client: client.ApiClient) -> None:
    names = {ns.metadata.name for ns in client.CoreV1Api(api_client).list_namespace().items}
    assert {"default", "kube-system"} <= names


def test_create_sets_server_fields(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    created = core.create_namespaced_config_map(namespace, _cm("a", k="v"))
    assert created.metadata.uid and created.metadata.creation_timestamp is not None
    assert int(created.metadata.resource_version) > 0
    second = core.create_namespaced_config_map(namespace, _cm("b"))
    assert int(second.metadata.resource_version) > int(created.metadata.resource_version)


def test_generate_name(api_client: client.ApiClient, namespace: str) -> None:
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="gen-"))
    created = client.CoreV1Api(api_client).create_namespaced_config_map(namespace, body)
    assert created.metadata.name.startswith("gen-") and len(created.metadata.name) == len("gen-") + 5


def test_generation_bumps_on_spec_changes_only(api_client: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    created = apps.create_namespaced_deployment(namespace, _deployment("gen"))
    assert created.metadata.generation == 1
    labelled = apps.patch_namespaced_deployment("gen", namespace, {"metadata": {"labels": {"x": "y"}}})
    assert labelled.metadata.generation == 1
    status = apps.patch_namespaced_deployment_status("gen", namespace, {"status": {"replicas": 1}})
    assert status.metadata.generation == 1 and status.status.replicas == 1
    changed = apps.patch_namespaced_deployment("gen", namespace, {"spec": {"replicas": 3}})
    assert changed.metadata.generation == 2


def test_status_subresource_separation(api_client: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    apps.create_namespaced_deployment(namespace, _deployment("st"))
    apps.patch_namespaced_deployment_status("st", namespace, {"status": {"observedGeneration": 1}})
    current = apps.read_namespaced_deployment("st", namespace)
    current.spec.replicas = 5
    current.status.observed_generation = 99
    updated = apps.replace_namespaced_deployment("st", namespace, current)
    assert updated.spec.replicas == 5 and updated.status.observed_generation == 1
    current = apps.read_namespaced_deployment("st", namespace)
    current.spec.replicas = 7
    current.status.observed_generation = 2
    status_only = apps.replace_namespaced_deployment_status("st", namespace, current)
    assert status_only.spec.replicas == 5 and status_only.status.observed_generation == 2


def test_errors_are_kubernetes_status_objects(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_config_map("absent", namespace)
    assert missing.value.status == 404 and '"reason":"NotFound"' in missing.value.body.replace(" ", "")
    core.create_namespaced_config_map(namespace, _cm("dup"))
    with pytest.raises(ApiException) as dup:
        core.create_namespaced_config_map(namespace, _cm("dup"))
    assert dup.value.status == 409 and "AlreadyExists" in dup.value.body
    with pytest.raises(ApiException) as no_ns:
        core.create_namespaced_config_map("no-such-namespace", _cm("x"))
    assert no_ns.value.status == 404 and 'namespaces \\"no-such-namespace\\" not found' in no_ns.value.body


def test_invalid_names_give_422_with_causes(api_client: client.ApiClient, namespace: str) -> None:
    with pytest.raises(ApiException) as bad:
        client.CoreV1Api(api_client).create_namespaced_config_map(namespace, _cm("Not_Valid"))
    body = json.loads(bad.value.body)
    assert bad.value.status == 422 and body["reason"] == "Invalid"
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    assert body["details"]["causes"][0]["reason"] == "FieldValueInvalid"


def test_stale_resource_version_conflicts(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    first = core.create_namespaced_config_map(namespace, _cm("occ", v="1"))
    newer = core.patch_namespaced_config_map("occ", namespace, {"data": {"v": "2"}})
    first.data = {"v": "stale"}
    with pytest.raises(ApiException) as conflict:
        core.replace_namespaced_config_map("occ", namespace, first)
    assert conflict.value.status == 409 and "the object has been modified" in conflict.value.body
    newer.data = {"v": "3"}
    assert core.replace_namespaced_config_map("occ", namespace, newer).data == {"v": "3"}


def test_noop_update_keeps_resource_version(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    created = core.create_namespaced_config_map(namespace, _cm("same", a="b"))
    again = core.patch_namespaced_config_map("same", namespace, {"data": {"a": "b"}})
    assert again.metadata.resource_version == created.metadata.resource_version


def test_builtin_types_served(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    secret = core.create_namespaced_secret(
        namespace, client.V1Secret(metadata=client.V1ObjectMeta(name="s"), string_data={"k": "v"})
    )
    assert secret.data == {"k": "dg=="} and secret.type == "Opaque"
    svc = core.create_namespaced_service(
        namespace,
        client.V1Service(
            metadata=client.V1ObjectMeta(name="svc"),
            spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)], selector={"app": "x"}),
        ),
    )
    assert svc.spec.cluster_ip and svc.spec.ports[0].protocol == "TCP"
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="sa"))
    )
    lease = client.CoordinationV1Api(api_client).create_namespaced_lease(
        namespace,
        client.V1Lease(
            metadata=client.V1ObjectMeta(name="leader"),
            spec=client.V1LeaseSpec(holder_identity="me"),
        ),
    )
    assert lease.spec.holder_identity == "me"
    rbac = client.RbacAuthorizationV1Api(api_client)
    rbac.create_namespaced_role(
        namespace,
        client.V1Role(
            metadata=client.V1ObjectMeta(name="r"),
            rules=[client.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["get"])],
        ),
    )
    rbac.create_cluster_role(client.V1ClusterRole(metadata=client.V1ObjectMeta(name=f"cr-{namespace}")))
    assert rbac.read_cluster_role(f"cr-{namespace}").metadata.namespace is None
    events = client.EventsV1Api(api_client).create_namespaced_event(
        namespace,
        client.EventsV1Event(
            metadata=client.V1ObjectMeta(name="e1"),
            event_time="2026-11-25T00:00:00.000000Z",
            note="hi",
            reason="Test",
            action="Testing",
            reporting_controller="tests",
            reporting_instance="t1",
            type="Normal",
        ),
    )
    assert events.note == "hi"


def test_scale_subresource(api_client: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    apps.create_namespaced_deployment(namespace, _deployment("sc", replicas=2))
    scale = apps.read_namespaced_deployment_scale("sc", namespace)
    assert scale.spec.replicas == 2
    apps.patch_namespaced_deployment_scale("sc", namespace, {"spec": {"replicas": 6}})
    assert apps.read_namespaced_deployment("sc", namespace).spec.replicas == 6


def test_delete_returns_the_object_and_finalizers_hold(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _cm("plain"))
    deleted = core.delete_namespaced_config_map("plain", namespace, propagation_policy="Background")
    assert deleted["kind"] == "ConfigMap" and deleted["metadata"]["name"] == "plain"
    held = _cm("held")
    held.metadata.finalizers = ["example.com/hold"]
    core.create_namespaced_config_map(namespace, held)
    core.delete_namespaced_config_map("held", namespace)
    marked = core.read_namespaced_config_map("held", namespace)
    assert marked.metadata.deletion_timestamp is not None
    with pytest.raises(ApiException) as forbidden:
        core.patch_namespaced_config_map(
            "held", namespace, {"metadata": {"finalizers": ["example.com/hold", "b/c"]}}
        )
    assert forbidden.value.status == 422
    core.patch_namespaced_config_map("held", namespace, {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_config_map("held", namespace)
    assert gone.value.status == 404


def test_namespace_deletion_removes_contents(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    held = _cm("held")
    held.metadata.finalizers = ["example.com/hold"]
    core.create_namespaced_config_map(namespace, held)
    core.create_namespaced_config_map(namespace, _cm("free"))
    core.delete_namespace(namespace)
    assert core.read_namespace(namespace).status.phase == "Terminating"
    assert [c.metadata.name for c in core.list_namespaced_config_map(namespace).items] == ["held"]
    with pytest.raises(ApiException) as closed:
        core.create_namespaced_config_map(namespace, _cm("late"))
    assert closed.value.status == 403
    core.patch_namespaced_config_map("held", namespace, {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as gone:
        core.read_namespace(namespace)
    assert gone.value.status == 404


def test_protected_namespace_cannot_be_deleted(api_client: client.ApiClient) -> None:
    with pytest.raises(ApiException) as refused:
        client.CoreV1Api(api_client).delete_namespace("default")
    assert refused.value.status == 403
