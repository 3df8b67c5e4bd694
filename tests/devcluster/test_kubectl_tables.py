"""``kubectl get`` prints kube's columns for pods, nodes, workloads, jobs and services (server-side)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.devcluster import DevclusterProcess, Kubectl, simulated_devcluster
from tests.support.waiting import wait_for
from tests.support.workloads import workload

pytestmark = pytest.mark.integration

AGE = re.compile(r"^\d+s$")


@pytest.fixture(scope="module")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """Simulated controllers, so the columns show pods, readiness and completions."""
    yield from simulated_devcluster(tmp_path_factory.mktemp("tables"))


def _table(kubectl: Kubectl, *args: str) -> list[list[str]]:
    """``kubectl get`` output as rows of cells (columns are at least 3 spaces apart; no cell may be empty)."""
    lines = kubectl.run("get", *args).stdout.splitlines()
    return [re.split(r"\s{2,}", line.strip()) for line in lines if line.strip()]


def _rows(kubectl: Kubectl, *args: str) -> dict[str, dict[str, str]]:
    """Each row by name, as a dict from column header to cell."""
    header, *rows = _table(kubectl, *args)
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


def _apply(kubectl: Kubectl, namespace: str, body: dict[str, Any]) -> None:
    kubectl.run("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def _wait_for_field(kubectl: Kubectl, namespace: str, resource: str, path: str, wanted: str) -> None:
    """Wait until the field at jsonpath ``path`` of ``resource`` reads ``wanted``."""
    wait_for(
        lambda: kubectl.run("get", "-n", namespace, resource, "-o", f"jsonpath={path}").stdout == wanted,
        what=f"{resource} {path} = {wanted}",
    )


def test_pods_ready_status_restarts_and_wide_ip_and_node(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "deployment", "web", "-n", namespace, "--image=nginx", "--replicas=2")
    _wait_for_field(kubectl, namespace, "deployment/web", "{.status.readyReplicas}", "2")
    pods = kubectl.json("get", "pods", "-n", namespace)["items"]

    header, *rows = _table(kubectl, "pods", "-n", namespace)
    assert header == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert sorted(row[0] for row in rows) == sorted(p["metadata"]["name"] for p in pods)
    for row in rows:
        assert row[1:4] == ["1/1", "Running", "0"] and AGE.match(row[4])

    wide = _rows(kubectl, "pods", "-n", namespace, "-o", "wide")
    for pod in pods:
        row = wide[pod["metadata"]["name"]]
        assert list(row)[5:] == ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]
        assert (row["IP"], row["NODE"]) == (pod["status"]["podIP"], pod["spec"]["nodeName"])
        assert (row["NOMINATED NODE"], row["READINESS GATES"]) == ("<none>", "<none>")


def test_nodes(kubectl: Kubectl) -> None:
    node = _rows(kubectl, "nodes")["devcluster-node"]
    assert list(node) == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert (node["STATUS"], node["ROLES"], node["VERSION"]) == ("Ready", "<none>", "v1.32.0")
    wide = _rows(kubectl, "nodes", "-o", "wide")["devcluster-node"]
    assert list(wide)[5:] == ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    assert (wide["INTERNAL-IP"], wide["EXTERNAL-IP"]) == ("172.18.0.2", "<none>")


def test_replicasets_and_deployments_with_wide_containers_images_and_selector(
    kubectl: Kubectl, namespace: str
) -> None:
    kubectl.run("create", "deployment", "api", "-n", namespace, "--image=nginx:1.27", "--replicas=3")
    _wait_for_field(kubectl, namespace, "deployment/api", "{.status.readyReplicas}", "3")
    [(name, row)] = _rows(kubectl, "replicasets", "-n", namespace, "-o", "wide").items()
    pod_hash = name.removeprefix("api-")
    assert list(row) == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert [row["DESIRED"], row["CURRENT"], row["READY"]] == ["3", "3", "3"]
    assert (row["CONTAINERS"], row["IMAGES"]) == ("nginx", "nginx:1.27")
    assert row["SELECTOR"] == f"app=api,pod-template-hash={pod_hash}"
    deployment = _rows(kubectl, "deployments", "-n", namespace, "-o", "wide")["api"]
    assert list(deployment)[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert [deployment[c] for c in list(deployment)[5:]] == ["nginx", "nginx:1.27", "app=api"]


def test_statefulsets(kubectl: Kubectl, namespace: str) -> None:
    _apply(kubectl, namespace, workload("StatefulSet", "db", replicas=2, serviceName="db"))
    _wait_for_field(kubectl, namespace, "statefulset/db", "{.status.readyReplicas}", "2")
    row = _rows(kubectl, "statefulsets", "-n", namespace, "-o", "wide")["db"]
    assert list(row) == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert (row["READY"], row["CONTAINERS"], row["IMAGES"]) == ("2/2", "main", "nginx:1.27")


def test_daemonsets_show_counts_and_node_selector(kubectl: Kubectl, namespace: str) -> None:
    body = workload("DaemonSet", "agent", replicas=None)
    body["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/os": "linux"}
    _apply(kubectl, namespace, body)
    _wait_for_field(kubectl, namespace, "daemonset/agent", "{.status.numberAvailable}", "1")
    row = _rows(kubectl, "daemonsets", "-n", namespace)["agent"]
    assert list(row) == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "NODE SELECTOR",
        "AGE",
    ]
    counts = [row[c] for c in ("DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE")]
    assert counts == ["1"] * 5
    assert row["NODE SELECTOR"] == "kubernetes.io/os=linux"


def test_jobs_status_completions_duration_and_their_completed_pods(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "job", "once", "-n", namespace, "--image=busybox", "--", "true")
    _wait_for_field(kubectl, namespace, "job/once", "{.status.succeeded}", "1")
    row = _rows(kubectl, "jobs", "-n", namespace)["once"]
    assert list(row) == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert (row["STATUS"], row["COMPLETIONS"]) == ("Complete", "1/1")
    assert AGE.match(row["DURATION"])
    [pod] = _rows(kubectl, "pods", "-n", namespace, "-l", "job-name=once").values()
    assert (pod["READY"], pod["STATUS"]) == ("0/1", "Completed")


def test_cronjobs(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "cronjob", "nightly", "-n", namespace, "--image=busybox", "--schedule=0 3 * * *")
    row = _rows(kubectl, "cronjobs", "-n", namespace)["nightly"]
    assert list(row) == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"]
    assert [row[c] for c in list(row)[1:6]] == ["0 3 * * *", "<none>", "False", "0", "<none>"]


def test_services_type_ips_and_ports(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "service", "clusterip", "internal", "-n", namespace, "--tcp=80:8080")
    kubectl.run("create", "service", "nodeport", "exposed", "-n", namespace, "--tcp=443:8443")
    kubectl.run("create", "service", "loadbalancer", "public", "-n", namespace, "--tcp=80:80")
    _wait_for_field(kubectl, namespace, "service/public", "{.status.loadBalancer.ingress[0].ipMode}", "VIP")
    services = {s["metadata"]["name"]: s for s in kubectl.json("get", "services", "-n", namespace)["items"]}

    rows = _rows(kubectl, "services", "-n", namespace, "-o", "wide")
    assert list(rows["internal"]) == [
        "NAME",
        "TYPE",
        "CLUSTER-IP",
        "EXTERNAL-IP",
        "PORT(S)",
        "AGE",
        "SELECTOR",
    ]
    shown = {
        name: [row[c] for c in ("TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)")] for name, row in rows.items()
    }
    spec = {name: service["spec"] for name, service in services.items()}
    lb_ip = services["public"]["status"]["loadBalancer"]["ingress"][0]["ip"]
    assert shown == {
        "internal": ["ClusterIP", spec["internal"]["clusterIP"], "<none>", "80/TCP"],
        "exposed": [
            "NodePort",
            spec["exposed"]["clusterIP"],
            "<none>",
            f"443:{spec['exposed']['ports'][0]['nodePort']}/TCP",
        ],
        "public": [
            "LoadBalancer",
            spec["public"]["clusterIP"],
            lb_ip,
            f"80:{spec['public']['ports'][0]['nodePort']}/TCP",
        ],
    }
    assert rows["internal"]["SELECTOR"] == "app=internal"
