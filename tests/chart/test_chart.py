"""The Helm chart, rendered by Helm's own engine (helm-python-sdk embeds Helm's Go SDK), for several
values sets: the objects, their wiring, the RBAC verbs, and the published Kubernetes JSON schemas
(kubernetes-validate ships them, as kubeconform uses them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner

import syncflow
from syncflow.api import crdgen
from syncflow.cli import main
from syncflow.config import Settings, load_settings
from tests.chart.rendering import (
    CHART,
    FULLNAME,
    KUBE_VERSIONS,
    NAMESPACE,
    RELEASE,
    REQUIRED,
    by_kind,
    container,
    containers,
    env,
    helm,
    render,
)

CONSOLE_VARIABLES = ("SYNCFLOW_CONSOLE_TOKEN", "SYNCFLOW_CONSOLE_BASIC_AUTH")

VALUES_SETS: dict[str, dict[str, Any]] = {
    "default": REQUIRED,
    "external-redis": {
        **REQUIRED,
        "redis": {"enabled": False, "external": {"url": "redis://redis.example:6379/2"}},
    },
    "external-redis-secret": {
        **REQUIRED,
        "redis": {"enabled": False, "external": {"existingSecret": "redis", "existingSecretKey": "url"}},
    },
    "flower-ingress": {
        **REQUIRED,
        "flower": {
            "enabled": True,
            "auth": {"existingSecret": "flower-auth"},
            "urlPrefix": "flower",
            "ingress": {
                "enabled": True,
                "className": "nginx",
                "hosts": [{"host": "ops.example.com", "paths": [{"path": "/flower", "pathType": "Prefix"}]}],
                "tls": [{"hosts": ["ops.example.com"], "secretName": "ops-tls"}],
            },
        },
    },
    "console": {
        **REQUIRED,
        "console": {
            "enabled": True,
            "auth": {"existingSecret": "console-auth", "key": "auth", "type": "basic"},
            "workspaces": ["root:team-a", "root:team-b:*"],
            "flowerUrl": "https://ops.example.com/flower",
            "metricsUrls": ["http://worker-0.example:9090/metrics"],
        },
    },
    "hpa": {
        **REQUIRED,
        "worker": {
            "autoscaling": {"enabled": True, "minReplicas": 3, "maxReplicas": 12},
            "probes": {"enabled": False},
        },
    },
    "full": {
        **REQUIRED,
        "agentName": "billing",
        "kubeconfig": "service-kubeconfig",
        "publishedResourceSelector": "team=billing",
        "settings": {"task_time_limit": "50s", "endpoint_qps": 100},
        "extraEnv": [{"name": "SYNCFLOW_BACKOFF_CAP", "value": "120"}],
        "rbac": {"syncedResources": [{"apiGroups": ["example.com"], "resources": ["databases"]}]},
        "metrics": {
            "enabled": True,
            "serviceMonitor": {"enabled": True},
            "grafanaDashboard": {"enabled": True},
        },
        "global": {"imagePullSecrets": ["pull"]},
        "nodeSelector": {"pool": "agents"},
        "tolerations": [{"key": "agents", "operator": "Exists", "effect": "NoSchedule"}],
    },
}


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict[str, Any]]]:
    return {name: render(values) for name, values in VALUES_SETS.items()}


def test_default_objects(rendered: dict[str, list[dict[str, Any]]]) -> None:
    assert sorted(by_kind(rendered["default"])) == sorted(
        [
            ("CustomResourceDefinition", "publishedresources.syncagent.kcp.io"),
            ("ServiceAccount", FULLNAME),
            ("ClusterRole", f"{FULLNAME}:{NAMESPACE}"),
            ("ClusterRoleBinding", f"{FULLNAME}:{NAMESPACE}"),
            ("Role", FULLNAME),
            ("RoleBinding", FULLNAME),
            ("Deployment", f"{FULLNAME}-watch"),
            ("Deployment", f"{FULLNAME}-worker"),
            ("Deployment", f"{FULLNAME}-beat"),
            ("Deployment", f"{FULLNAME}-redis"),
            ("Service", f"{FULLNAME}-redis"),
            ("PodDisruptionBudget", f"{FULLNAME}-watch"),
            ("PodDisruptionBudget", f"{FULLNAME}-worker"),
        ]
    )


@pytest.mark.parametrize("values_set", sorted(VALUES_SETS))
def test_every_object_is_labelled_and_every_selector_matches(
    rendered: dict[str, list[dict[str, Any]]], values_set: str
) -> None:
    for obj in rendered[values_set]:
        labels = obj["metadata"].get("labels") or {}
        if obj["kind"] != "CustomResourceDefinition":
            assert labels["app.kubernetes.io/instance"] == RELEASE, obj["metadata"]["name"]
            assert labels["app.kubernetes.io/managed-by"] == "Helm"
        if obj["metadata"].get("namespace") is not None:
            assert obj["metadata"]["namespace"] == NAMESPACE
        if obj["kind"] == "Deployment":
            selector = obj["spec"]["selector"]["matchLabels"]
            pod_labels = obj["spec"]["template"]["metadata"]["labels"]
            assert selector.items() <= pod_labels.items()
            assert obj["metadata"]["name"].endswith("-" + selector["app.kubernetes.io/component"])


@pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
@pytest.mark.parametrize("values_set", sorted(VALUES_SETS))
def test_objects_are_valid_against_the_kubernetes_schemas(
    rendered: dict[str, list[dict[str, Any]]], values_set: str, kube_version: str
) -> None:
    for obj in rendered[values_set]:
        if obj["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # Prometheus operator CRD: not in Kubernetes' schemas (checked below)
        kubernetes_validate.validate(obj, kube_version, strict=True)


def test_the_schema_check_catches_a_broken_object(rendered: dict[str, list[dict[str, Any]]]) -> None:
    deployment = json.loads(json.dumps(by_kind(rendered["default"])[("Deployment", f"{FULLNAME}-watch")]))
    deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["port"] = ["health"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, "1.32.0", strict=True)


def test_watch_leads_with_two_replicas_and_probes(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["default"]
    deployment = by_kind(objects)[("Deployment", f"{FULLNAME}-watch")]
    assert deployment["spec"]["replicas"] == 2
    watch = container(objects, "watch")
    assert watch["args"] == ["watch"]
    assert watch["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert watch["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert {"name": "health", "containerPort": 8080, "protocol": "TCP"} in watch["ports"]
    variables = env(objects, "watch")
    assert variables["SYNCFLOW_HEALTH_ADDRESS"] == "0.0.0.0:8080"
    assert variables["SYNCFLOW_ENABLE_LEADER_ELECTION"] == "true"
    assert variables["SYNCFLOW_AGENT_NAME"] == RELEASE
    assert variables["SYNCFLOW_APIEXPORTENDPOINTSLICE_REF"] == "my-export"
    assert variables["SYNCFLOW_KCP_KUBECONFIG"] == "/etc/syncflow/kcp/kubeconfig"
    assert "SYNCFLOW_KUBECONFIG" not in variables  # in-cluster ServiceAccount
    assert variables["SYNCFLOW_NAMESPACE"] == {
        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}
    }
    assert variables["SYNCFLOW_REDIS_URL"] == f"redis://{FULLNAME}-redis:6379/0"
    pdb = by_kind(objects)[("PodDisruptionBudget", f"{FULLNAME}-watch")]
    assert pdb["spec"]["minAvailable"] == 1


def test_worker_and_beat(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["default"]
    kinds = by_kind(objects)
    worker = kinds[("Deployment", f"{FULLNAME}-worker")]
    assert worker["spec"]["replicas"] == 2
    assert worker["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 90
    worker_container = container(objects, "worker")
    assert worker_container["args"] == ["worker", "--concurrency=2"]
    assert worker_container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert worker_container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert worker_container["ports"] == [{"name": "health", "containerPort": 8080, "protocol": "TCP"}]
    assert env(objects, "worker")["SYNCFLOW_HEALTH_ADDRESS"] == "0.0.0.0:8080"
    beat = kinds[("Deployment", f"{FULLNAME}-beat")]
    assert beat["spec"]["replicas"] == 1 and beat["spec"]["strategy"] == {"type": "Recreate"}
    assert beat["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
    assert container(objects, "beat")["args"] == ["beat", "--schedule=/var/lib/syncflow/beat-schedule"]
    mounts = {m["mountPath"]: m["name"] for m in container(objects, "beat")["volumeMounts"]}
    assert mounts["/var/lib/syncflow"] == "state"
    assert "SYNCFLOW_KCP_KUBECONFIG" not in env(objects, "beat")


def test_containers_are_non_root_with_a_read_only_root(rendered: dict[str, list[dict[str, Any]]]) -> None:
    for values_set in ("default", "flower-ingress"):
        for name, c in containers(rendered[values_set]):
            assert c["securityContext"]["readOnlyRootFilesystem"] is True, name
            assert c["securityContext"]["allowPrivilegeEscalation"] is False, name
            assert "/tmp" in {m["mountPath"] for m in c.get("volumeMounts", [])} or name.endswith("-redis")
        for obj in rendered[values_set]:
            if obj["kind"] == "Deployment":
                assert obj["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_commands_and_flags_exist(rendered: dict[str, list[dict[str, Any]]]) -> None:
    for values_set in ("default", "hpa"):
        for name, c in containers(rendered[values_set]):
            if name.endswith(("-redis", "-flower")):
                continue
            result = CliRunner().invoke(main, [*c["args"], "--help"])
            assert result.exit_code == 0, (name, c["args"], result.output)


@pytest.mark.parametrize("values_set", sorted(VALUES_SETS))
def test_every_syncflow_variable_is_a_setting(
    rendered: dict[str, list[dict[str, Any]]], values_set: str
) -> None:
    fields = set(Settings.model_fields) | {"config"}  # SYNCFLOW_CONFIG names the YAML file
    for name, c in containers(rendered[values_set]):
        for variable in c.get("env", []):
            if variable["name"] in CONSOLE_VARIABLES:
                continue  # the console's credentials: its own options, never an agent setting
            if variable["name"].startswith("SYNCFLOW_"):
                setting = variable["name"].removeprefix("SYNCFLOW_").lower()
                assert setting in fields, (name, variable["name"])


def test_rbac_has_exactly_the_verbs_syncflow_uses(rendered: dict[str, list[dict[str, Any]]]) -> None:
    kinds = by_kind(rendered["full"])
    cluster_rules = {
        (tuple(r["apiGroups"]), tuple(r["resources"])): r["verbs"]
        for r in kinds[("ClusterRole", f"{FULLNAME}:{NAMESPACE}")]["rules"]
    }
    assert cluster_rules == {
        (("syncagent.kcp.io",), ("publishedresources",)): ["get", "list", "watch", "patch"],
        (("syncagent.kcp.io",), ("publishedresources/status",)): ["patch"],
        (("apiextensions.k8s.io",), ("customresourcedefinitions",)): ["get", "list", "watch"],
        (("",), ("namespaces",)): ["get", "create"],
        (("example.com",), ("databases",)): ["get", "list", "watch", "create", "patch", "delete"],
    }
    role = kinds[("Role", FULLNAME)]
    assert role["metadata"]["namespace"] == NAMESPACE
    assert {(tuple(r["apiGroups"]), tuple(r["resources"])): r["verbs"] for r in role["rules"]} == {
        (("coordination.k8s.io",), ("leases",)): ["get", "create", "update"],
        (("",), ("secrets",)): ["get", "create", "update", "delete"],
    }
    for binding in (
        kinds[("ClusterRoleBinding", f"{FULLNAME}:{NAMESPACE}")],
        kinds[("RoleBinding", FULLNAME)],
    ):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": FULLNAME, "namespace": NAMESPACE}]


def test_external_redis_has_no_redis_objects(rendered: dict[str, list[dict[str, Any]]]) -> None:
    for values_set in ("external-redis", "external-redis-secret"):
        objects = rendered[values_set]
        assert not [o for o in objects if o["metadata"]["name"].endswith("-redis")]
        assert not [
            o
            for o in objects
            if (o["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "redis"
        ]
    for component in ("watch", "worker", "beat"):
        assert (
            env(rendered["external-redis"], component)["SYNCFLOW_REDIS_URL"] == "redis://redis.example:6379/2"
        )
        assert env(rendered["external-redis-secret"], component)["SYNCFLOW_REDIS_URL"] == {
            "secretKeyRef": {"name": "redis", "key": "url"}
        }


def test_flower_with_auth_and_ingress(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["flower-ingress"]
    kinds = by_kind(objects)
    flower = container(objects, "flower")
    assert flower["command"] == ["celery", "-A", "syncflow.tasks", "flower"]
    assert "--url_prefix=flower" in flower["args"]
    assert "--tasks_columns=name,uuid,state,args,exception,received,runtime,worker" in flower["args"]
    assert env(objects, "flower")["FLOWER_BASIC_AUTH"] == {
        "secretKeyRef": {"name": "flower-auth", "key": "auth"}
    }
    assert flower["readinessProbe"]["httpGet"] == {"path": "/flower/healthcheck", "port": "http"}
    service = kinds[("Service", f"{FULLNAME}-flower")]
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "flower"
    ingress = kinds[("Ingress", f"{FULLNAME}-flower")]
    assert ingress["spec"]["ingressClassName"] == "nginx"
    [path] = ingress["spec"]["rules"][0]["http"]["paths"]
    assert path["backend"] == {"service": {"name": f"{FULLNAME}-flower", "port": {"name": "http"}}}
    assert ("Deployment", f"{FULLNAME}-flower") not in by_kind(rendered["default"])


def test_hpa_owns_the_worker_replicas(rendered: dict[str, list[dict[str, Any]]]) -> None:
    kinds = by_kind(rendered["hpa"])
    assert "replicas" not in kinds[("Deployment", f"{FULLNAME}-worker")]["spec"]
    hpa = kinds[("HorizontalPodAutoscaler", f"{FULLNAME}-worker")]
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": f"{FULLNAME}-worker",
    }
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 12)
    worker = container(rendered["hpa"], "worker")  # probes switched off
    assert "livenessProbe" not in worker and "ports" not in worker
    assert "SYNCFLOW_HEALTH_ADDRESS" not in env(rendered["hpa"], "worker")
    assert ("PodDisruptionBudget", f"{FULLNAME}-worker") in kinds


def test_metrics_service_monitor_settings_and_kubeconfig(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    objects = rendered["full"]
    kinds = by_kind(objects)
    monitor = kinds[("ServiceMonitor", FULLNAME)]
    service = kinds[("Service", f"{FULLNAME}-metrics")]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "interval": "30s"}]
    assert {"name": "health", "containerPort": 8080, "protocol": "TCP"} in container(objects, "worker")[
        "ports"
    ]
    for component in ("watch", "worker", "beat"):
        assert {"name": "metrics", "containerPort": 9090, "protocol": "TCP"} in container(objects, component)[
            "ports"
        ]
        variables = env(objects, component)
        assert variables["SYNCFLOW_METRICS_ADDRESS"] == "0.0.0.0:9090"
        assert variables["SYNCFLOW_CONFIG"] == "/etc/syncflow/config/config.yaml"
        assert variables["SYNCFLOW_AGENT_NAME"] == "billing"
    config = kinds[("ConfigMap", f"{FULLNAME}-config")]["data"]["config.yaml"]
    assert yaml.safe_load(config) == {"task_time_limit": "50s", "endpoint_qps": 100}
    written = tmp_path / "config.yaml"
    written.write_text(config)
    assert load_settings(written).task_time_limit == 50.0  # a Go duration, as in kcp's own charts
    assert env(objects, "watch")["SYNCFLOW_KUBECONFIG"] == "/etc/syncflow/cluster/kubeconfig"
    assert env(objects, "watch")["SYNCFLOW_PUBLISHED_RESOURCE_SELECTOR"] == "team=billing"
    dashboard = json.loads(kinds[("ConfigMap", f"{FULLNAME}-dashboard")]["data"]["syncflow.json"])
    assert dashboard["uid"] == "syncflow"


def test_dashboard_queries_the_agreed_metric_names() -> None:
    dashboard = json.loads((CHART / "dashboards" / "syncflow.json").read_text())
    expressions = " ".join(t["expr"] for p in dashboard["panels"] for t in p["targets"])
    for metric in (
        "syncflow_queue_keys",
        "syncflow_queue_messages",
        "syncflow_queue_tasks_total",
        "syncer_resources_synced_total",
        "syncer_sync_duration_seconds_bucket",
        "syncer_sync_errors_total",
        "syncer_heartbeat_total",
        "syncer_connection_status",
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_queue_duration_seconds_bucket",
        "workqueue_work_duration_seconds_bucket",
        "workqueue_retries_total",
        "rest_client_requests_total",
        "leader_election_master_status",
    ):
        assert metric in expressions, metric
    assert 'state="parked"' in expressions
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            if "syncflow_queue_keys" in target["expr"] or "syncflow_queue_messages" in target["expr"]:
                # every process of an agent reports the same Redis figures: never add them up
                assert "max by (agent, queue" in target["expr"], target["expr"]
            if "workqueue_depth" in target["expr"]:
                assert "max by (agent, name)" in target["expr"], target["expr"]


def test_chart_crds_are_the_codes_crds() -> None:
    """Publish mode installs PublishedResource in the service cluster (SyncTarget lives in kcp)."""
    publish = crdgen.crds_for("publish")
    assert (CHART / "files" / "crds-publish.yaml").read_text() == crdgen.to_yaml(publish)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"apiExportEndpointSliceName": "x"}, "kcpKubeconfig (a Secret with the kcp kubeconfig) is required"),
        ({"kcpKubeconfig": "k"}, "apiExportEndpointSliceName is required in publish mode"),
        (
            {**REQUIRED, "redis": {"enabled": False}},
            "redis.external.url or redis.external.existingSecret is required",
        ),
        (
            {**REQUIRED, "flower": {"enabled": True}},
            "flower.auth.existingSecret (a Secret holding user:password)",
        ),
        ({**REQUIRED, "enableLeaderElection": False}, "watch.replicas > 1 needs enableLeaderElection"),
    ],
)
def test_missing_values_fail_with_a_clear_message(values: dict[str, Any], message: str) -> None:
    with pytest.raises(helm.HelmError) as caught:
        render(values)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "values",
    [
        {**REQUIRED, "mode": "tmc"},
        {**REQUIRED, "agentName": "Not_A_Label"},
        {**REQUIRED, "watch": {"replicas": 0}},
        {**REQUIRED, "worker": {"concurenccy": 4}},
        {**REQUIRED, "logFormat": "xml"},
        {**REQUIRED, "redis": {"external": {"url": "http://redis:6379"}}},
    ],
)
def test_values_schema_rejects_bad_values(values: dict[str, Any]) -> None:
    with pytest.raises(helm.HelmValuesError):
        helm.Chart.load(CHART).validate_schema(values)


def test_helm_lint_is_clean() -> None:
    report = helm.lint(CHART, REQUIRED, strict=True)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_chart_app_version_is_syncflows_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["appVersion"] == syncflow.__version__
    assert helm.Chart.load(CHART).metadata["appVersion"] == syncflow.__version__


def test_the_console_is_off_by_default(rendered: dict[str, list[dict[str, Any]]]) -> None:
    assert not any(name.endswith("-console") for _, name in by_kind(rendered["default"]))


def test_the_console_with_credentials_from_a_secret(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["console"]
    console = container(objects, "console")
    assert console["args"] == [
        "console",
        "--mode=publish",
        "--host=0.0.0.0",
        "--port=8080",
        "--workspaces=root:team-a,root:team-b:*",
        "--flower-url=https://ops.example.com/flower",
        "--metrics-url=http://worker-0.example:9090/metrics",
    ]
    variables = env(objects, "console")
    assert variables["SYNCFLOW_CONSOLE_BASIC_AUTH"] == {
        "secretKeyRef": {"name": "console-auth", "key": "auth"}
    }
    assert "SYNCFLOW_CONSOLE_TOKEN" not in variables
    assert variables["SYNCFLOW_KCP_KUBECONFIG"] == "/etc/syncflow/kcp/kubeconfig"
    assert console["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    service = by_kind(objects)[("Service", f"{FULLNAME}-console")]
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "console"
    assert service["spec"]["ports"][0]["port"] == 8080
    result = CliRunner().invoke(main, [*console["args"], "--help"])
    assert result.exit_code == 0, result.output


def test_the_console_needs_a_secret() -> None:
    with pytest.raises(Exception, match=r"console\.auth\.existingSecret"):
        render({**REQUIRED, "console": {"enabled": True}})
