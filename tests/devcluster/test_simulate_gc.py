"""Issue 10 item 7: garbage collection by ownerReferences in all three propagation policies, and
namespace deletion with running workloads (simulated controllers, official client)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.support.devcluster import DevclusterProcess, simulated_devcluster
from tests.support.waiting import wait_for
from tests.support.workloads import status_field, workload


@pytest.fixture(scope="module")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """This module's devcluster runs the simulated controllers (conftest's does not)."""
    yield from simulated_devcluster(tmp_path_factory.mktemp("simulated"))


def _owner_ref(owner: client.V1ConfigMap, *, block: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner.metadata.name,
        "uid": owner.metadata.uid,
        "blockOwnerDeletion": block,
    }


def _cm(
    core: client.CoreV1Api,
    namespace: str,
    name: str,
    *,
    owners: tuple[dict[str, Any], ...] = (),
    finalizers: tuple[str, ...] = (),
) -> client.V1ConfigMap:
    metadata: dict[str, Any] = {"name": name}
    if owners:
        metadata["ownerReferences"] = list(owners)
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    return core.create_namespaced_config_map(
        namespace, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    )


def _gone(read: Any, *args: str) -> bool:
    try:
        read(*args)
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


def test_background_deletes_dependents_after_the_owner(api_client: client.ApiClient, namespace: str) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_deployment(namespace, workload("Deployment", "bg", replicas=2))
    wait_for(lambda: len(core.list_namespaced_pod(namespace).items) == 2, what="2 pods")
    apps.delete_namespaced_deployment("bg", namespace, propagation_policy="Background")
    wait_for(lambda: not apps.list_namespaced_replica_set(namespace).items, what="the ReplicaSet collected")
    wait_for(lambda: not core.list_namespaced_pod(namespace).items, what="the pods collected")


def test_a_dependent_with_another_owner_only_loses_the_reference(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    first, second = _cm(core, namespace, "first"), _cm(core, namespace, "second")
    _cm(core, namespace, "shared", owners=(_owner_ref(first), _owner_ref(second)))
    _cm(core, namespace, "only", owners=(_owner_ref(first),))
    core.delete_namespaced_config_map("first", namespace)
    wait_for(lambda: _gone(core.read_namespaced_config_map, "only", namespace), what="'only' collected")
    shared = wait_for(
        lambda: (
            len((c := core.read_namespaced_config_map("shared", namespace)).metadata.owner_references) == 1
            and c
        ),
        what="'shared' to lose its reference to 'first'",
    )
    assert shared.metadata.owner_references[0].uid == second.metadata.uid


def test_a_dependent_whose_owner_does_not_exist_is_collected(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    ghost = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "ghost",
        "uid": "00000000-0000-0000-0000-000000000001",
    }
    _cm(core, namespace, "dangling", owners=(ghost,))
    wait_for(
        lambda: _gone(core.read_namespaced_config_map, "dangling", namespace), what="'dangling' collected"
    )


def test_foreground_deletes_dependents_first(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    owner = _cm(core, namespace, "owner")  # the Foreground DELETE records foregroundDeletion on it
    _cm(core, namespace, "held", owners=(_owner_ref(owner),), finalizers=("example.com/hold",))
    _cm(core, namespace, "free", owners=(_owner_ref(owner, block=False),))
    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Foreground")
    wait_for(
        lambda: core.read_namespaced_config_map("held", namespace).metadata.deletion_timestamp is not None,
        what="the blocking dependent marked for deletion",
    )
    wait_for(lambda: _gone(core.read_namespaced_config_map, "free", namespace), what="'free' deleted")
    waiting = core.read_namespaced_config_map("owner", namespace)  # held back by the blocking dependent
    assert waiting.metadata.deletion_timestamp is not None
    assert waiting.metadata.finalizers == ["foregroundDeletion"]
    core.patch_namespaced_config_map("held", namespace, {"metadata": {"finalizers": None}})
    wait_for(
        lambda: _gone(core.read_namespaced_config_map, "owner", namespace), what="the owner removed last"
    )


def test_foreground_deletion_of_a_deployment_removes_everything(
    api_client: client.ApiClient, namespace: str
) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_deployment(namespace, workload("Deployment", "fg", replicas=2))
    wait_for(
        lambda: status_field(apps.read_namespaced_deployment("fg", namespace), "ready_replicas") == 2,
        what="ready",
    )
    apps.delete_namespaced_deployment("fg", namespace, propagation_policy="Foreground")
    wait_for(lambda: _gone(apps.read_namespaced_deployment, "fg", namespace), what="the Deployment removed")
    assert not apps.list_namespaced_replica_set(namespace).items  # the ReplicaSet went before it
    wait_for(lambda: not core.list_namespaced_pod(namespace).items, what="the pods removed")


def test_orphan_removes_the_references(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    owner = _cm(core, namespace, "owner")  # the Orphan DELETE records the orphan finalizer on it
    _cm(core, namespace, "kept-1", owners=(_owner_ref(owner),))
    _cm(core, namespace, "kept-2", owners=(_owner_ref(owner),))
    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Orphan")
    wait_for(lambda: _gone(core.read_namespaced_config_map, "owner", namespace), what="the owner removed")
    for name in ("kept-1", "kept-2"):
        kept = core.read_namespaced_config_map(name, namespace)
        assert kept.metadata.deletion_timestamp is None and not kept.metadata.owner_references


def test_namespace_deletion_empties_a_namespace_with_workloads(
    api_client: client.ApiClient, namespace: str
) -> None:
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    apps.create_namespaced_deployment(namespace, workload("Deployment", "ns", replicas=3))
    service = {"metadata": {"name": "ns"}, "spec": {"selector": {"app": "ns"}, "ports": [{"port": 80}]}}
    core.create_namespaced_service(namespace, service)
    wait_for(
        lambda: status_field(apps.read_namespaced_deployment("ns", namespace), "ready_replicas") == 3,
        what="ready",
    )
    wait_for(lambda: core.list_namespaced_endpoints(namespace).items, what="the Endpoints")
    core.delete_namespace(namespace)
    wait_for(lambda: _gone(core.read_namespace, namespace), what="the namespace removed")
    for listed in (
        core.list_namespaced_pod,
        core.list_namespaced_endpoints,
        apps.list_namespaced_replica_set,
    ):
        assert not listed(namespace).items
    with pytest.raises(ApiException) as closed:
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "late"}})
    assert closed.value.status == 404
