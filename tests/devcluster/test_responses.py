"""Issue 10 item 2: kube-apiserver's responses — deleted objects, Status bodies, create-time defaults."""

from __future__ import annotations

import ipaddress
import json
import urllib.error
import urllib.request

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.support.devcluster import DevclusterProcess

LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}


def _pod(name: str, resources: dict[str, dict[str, str]] | None = None) -> dict[str, object]:
    container = {"name": "c", "image": "nginx", "resources": resources or {}}
    return {"metadata": {"name": name}, "spec": {"containers": [container]}}


def test_pod_create_is_defaulted_and_delete_returns_the_pod(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    pod = core.create_namespaced_pod(namespace, _pod("p"))
    assert (pod.status.phase, pod.status.qos_class) == ("Pending", "BestEffort")
    spec = pod.spec
    assert (spec.restart_policy, spec.dns_policy, spec.scheduler_name) == (
        "Always",
        "ClusterFirst",
        "default-scheduler",
    )
    assert spec.termination_grace_period_seconds == 30 and spec.service_account_name == "default"
    assert {t.key for t in spec.tolerations} == {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    }
    container = spec.containers[0]
    assert (container.image_pull_policy, container.termination_message_policy) == ("Always", "File")
    burstable = core.create_namespaced_pod(namespace, _pod("b", {"requests": {"cpu": "10m"}}))
    assert burstable.status.qos_class == "Burstable"
    limits = {"cpu": "100m", "memory": "64Mi"}
    guaranteed = core.create_namespaced_pod(namespace, _pod("g", {"limits": limits}))
    assert (
        guaranteed.status.qos_class == "Guaranteed"
        and guaranteed.spec.containers[0].resources.requests == limits
    )
    deleted = core.delete_namespaced_pod("p", namespace)
    assert isinstance(deleted, client.V1Pod) and deleted.metadata.uid == pod.metadata.uid


def test_services_get_unique_cluster_ips_and_node_ports(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    ports = [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    first = core.create_namespaced_service(namespace, {"metadata": {"name": "a"}, "spec": {"ports": ports}})
    lb = core.create_namespaced_service(
        namespace, {"metadata": {"name": "b"}, "spec": {"type": "LoadBalancer", "ports": ports}}
    )
    assert first.spec.cluster_ip != lb.spec.cluster_ip and lb.spec.cluster_ips == [lb.spec.cluster_ip]
    assert all(
        ipaddress.ip_address(s.spec.cluster_ip) in ipaddress.ip_network("10.96.0.0/12") for s in (first, lb)
    )
    assert first.status.load_balancer is not None and first.spec.ports[0].node_port is None
    node_ports = [p.node_port for p in lb.spec.ports]
    assert len(set(node_ports)) == 2 and all(30000 <= p <= 32767 for p in node_ports)
    assert lb.spec.external_traffic_policy == "Cluster" and lb.spec.allocate_load_balancer_node_ports is True
    replaced = core.patch_namespaced_service("b", namespace, {"metadata": {"labels": {"x": "y"}}})
    assert [p.node_port for p in replaced.spec.ports] == node_ports
    taken = {"type": "NodePort", "ports": [{"port": 80, "nodePort": node_ports[0]}]}
    with pytest.raises(ApiException) as clash:
        core.create_namespaced_service(namespace, {"metadata": {"name": "c"}, "spec": taken})
    assert clash.value.status == 422 and "provided port is already allocated" in clash.value.body
    deleted = core.delete_namespaced_service("a", namespace)
    assert isinstance(deleted, client.V1Service) and deleted.metadata.name == "a"


def test_workloads_are_defaulted_as_kube_does(api_client: client.ApiClient, namespace: str) -> None:
    apps, batch = client.AppsV1Api(api_client), client.BatchV1Api(api_client)
    spec = {"selector": {"matchLabels": LABELS}, "template": TEMPLATE}
    deployment = apps.create_namespaced_deployment(namespace, {"metadata": {"name": "d"}, "spec": spec}).spec
    assert (deployment.replicas, deployment.revision_history_limit, deployment.progress_deadline_seconds) == (
        1,
        10,
        600,
    )
    assert deployment.strategy.type == "RollingUpdate"
    assert (
        deployment.strategy.rolling_update.max_surge,
        deployment.strategy.rolling_update.max_unavailable,
    ) == (
        "25%",
        "25%",
    )
    template = deployment.template.spec
    assert (template.restart_policy, template.termination_grace_period_seconds) == ("Always", 30)
    assert template.containers[0].image_pull_policy == "IfNotPresent"
    sts = apps.create_namespaced_stateful_set(
        namespace, {"metadata": {"name": "s"}, "spec": {**spec, "serviceName": "s"}}
    ).spec
    assert (
        sts.pod_management_policy,
        sts.update_strategy.type,
        sts.update_strategy.rolling_update.partition,
    ) == (
        "OrderedReady",
        "RollingUpdate",
        0,
    )
    ds = apps.create_namespaced_daemon_set(namespace, {"metadata": {"name": "ds"}, "spec": spec}).spec
    assert ds.update_strategy.rolling_update.max_unavailable == 1 and ds.revision_history_limit == 10
    job_template = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}  # type: ignore[dict-item]
    job = batch.create_namespaced_job(
        namespace, {"metadata": {"name": "j"}, "spec": {"template": job_template}}
    )
    assert (job.spec.backoff_limit, job.spec.completions, job.spec.parallelism) == (6, 1, 1)
    uid_label = "batch.kubernetes.io/controller-uid"
    assert job.spec.selector.match_labels == {uid_label: job.metadata.uid}
    assert job.spec.template.metadata.labels["job-name"] == "j"
    cron = batch.create_namespaced_cron_job(
        namespace,
        {
            "metadata": {"name": "c"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": job_template}}},
        },
    ).spec
    assert (cron.concurrency_policy, cron.successful_jobs_history_limit, cron.failed_jobs_history_limit) == (
        "Allow",
        3,
        1,
    )


def test_propagation_policy_is_recorded_as_a_finalizer(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    for name, policy, finalizer in (("f", "Foreground", "foregroundDeletion"), ("o", "Orphan", "orphan")):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name}})
        deleted = core.delete_namespaced_config_map(name, namespace, propagation_policy=policy)
        assert deleted["metadata"]["finalizers"] == [finalizer] and deleted["metadata"]["deletionTimestamp"]
        assert core.read_namespaced_config_map(name, namespace).metadata.finalizers == [finalizer]
        core.patch_namespaced_config_map(name, namespace, {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as invalid:
        core.delete_namespaced_config_map("f", namespace, propagation_policy="Sideways")
    assert invalid.value.status == 404  # gone once the finalizer was removed
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "x"}})
    with pytest.raises(ApiException) as invalid:
        core.delete_namespaced_config_map("x", namespace, propagation_policy="Sideways")
    assert invalid.value.status == 422 and 'Unsupported value: \\"Sideways\\"' in invalid.value.body


def test_namespace_and_crd_deletes_return_them_terminating(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "held", "finalizers": ["example.com/x"]}}
    )
    terminating = core.delete_namespace(namespace)
    assert terminating["status"]["phase"] == "Terminating" and terminating["metadata"]["deletionTimestamp"]
    ext = client.ApiextensionsV1Api(api_client)
    group = f"{namespace}.example.com"
    names = {"plural": "things", "singular": "thing", "kind": "Thing"}
    version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    crd = {
        "metadata": {"name": f"things.{group}"},
        "spec": {"group": group, "names": names, "scope": "Cluster", "versions": [version]},
    }
    ext.create_custom_resource_definition(crd)
    custom = client.CustomObjectsApi(api_client)
    custom.create_cluster_custom_object(
        group,
        "v1",
        "things",
        {"apiVersion": f"{group}/v1", "kind": "Thing", "metadata": {"name": "t", "finalizers": ["a.b/c"]}},
    )
    deleted = ext.delete_custom_resource_definition(f"things.{group}")
    assert deleted["kind"] == "CustomResourceDefinition" and deleted["metadata"]["deletionTimestamp"]
    custom.patch_cluster_custom_object(group, "v1", "things", "t", {"metadata": {"finalizers": None}})
    core.patch_namespaced_config_map("held", namespace, {"metadata": {"finalizers": None}})


def test_status_errors_have_kubes_field_order(devcluster: DevclusterProcess, namespace: str) -> None:
    try:
        urllib.request.urlopen(
            f"{devcluster.url}/apis/apps/v1/namespaces/{namespace}/deployments/nope", timeout=10
        )
    except urllib.error.HTTPError as exc:
        body = json.loads(exc.read())
    else:
        raise AssertionError("expected 404")
    assert list(body) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert list(body["details"]) == ["name", "group", "kind"]
