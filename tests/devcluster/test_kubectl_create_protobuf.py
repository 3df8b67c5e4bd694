"""kubectl's imperative generators POST protobuf bodies; devcluster must store what they describe."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
import uuid

import pytest

from syncflow.devcluster.protobuf import MAGIC
from tests.support.devcluster import DevclusterProcess, Kubectl

pytestmark = pytest.mark.integration


def _created(kubectl: Kubectl, namespace: str, *args: str) -> None:
    result = kubectl.run("create", "-n", namespace, *args)
    assert " created" in result.stdout


def test_create_configmap(kubectl: Kubectl, namespace: str) -> None:
    _created(kubectl, namespace, "configmap", "x", "--from-literal=a=b")
    cm = kubectl.json("get", "configmap", "x", "-n", namespace)
    assert cm["data"] == {"a": "b"}
    assert cm["metadata"]["namespace"] == namespace
    assert cm["metadata"]["uid"]


def test_create_secret_generic(kubectl: Kubectl, namespace: str) -> None:
    _created(kubectl, namespace, "secret", "generic", "s", "--from-literal=k=v")
    secret = kubectl.json("get", "secret", "s", "-n", namespace)
    assert secret["data"] == {"k": base64.b64encode(b"v").decode()}
    assert secret["type"] == "Opaque"


def test_create_namespace(kubectl: Kubectl) -> None:
    name = "pb-" + uuid.uuid4().hex[:8]
    assert kubectl.run("create", "namespace", name).stdout.strip() == f"namespace/{name} created"
    created = kubectl.json("get", "namespace", name)
    assert created["metadata"]["name"] == name
    assert created["status"]["phase"] == "Active"


def test_create_deployment(kubectl: Kubectl, namespace: str) -> None:
    _created(kubectl, namespace, "deployment", "d", "--image=nginx", "--replicas=2", "--port=80")
    deployment = kubectl.json("get", "deployment", "d", "-n", namespace)
    assert deployment["metadata"]["labels"] == {"app": "d"}
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    assert spec["selector"] == {"matchLabels": {"app": "d"}}
    assert spec["template"]["metadata"]["labels"] == {"app": "d"}
    [container] = spec["template"]["spec"]["containers"]
    assert (container["name"], container["image"]) == ("nginx", "nginx")
    assert [port["containerPort"] for port in container["ports"]] == [80]


def test_create_job(kubectl: Kubectl, namespace: str) -> None:
    _created(kubectl, namespace, "job", "j", "--image=busybox", "--", "echo", "hi")
    job = kubectl.json("get", "job", "j", "-n", namespace)
    template = job["spec"]["template"]["spec"]
    assert template["restartPolicy"] == "Never"
    [container] = template["containers"]
    assert (container["name"], container["image"], container["command"]) == ("j", "busybox", ["echo", "hi"])
    assert job["spec"]["completions"] == 1  # defaulted: the body decoded to a Job, not to an empty object


def test_create_cronjob_and_a_job_from_it(kubectl: Kubectl, namespace: str) -> None:
    _created(kubectl, namespace, "cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *")
    cronjob = kubectl.json("get", "cronjob", "nightly", "-n", namespace)
    assert cronjob["spec"]["schedule"] == "0 3 * * *"
    [container] = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert (container["name"], container["image"]) == ("nightly", "busybox")

    # kubectl copies the stored (defaulted) job template into the Job it sends, owned by the CronJob
    _created(kubectl, namespace, "job", "manual", "--from=cronjob/nightly")
    job = kubectl.json("get", "job", "manual", "-n", namespace)
    assert job["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
    [owner] = job["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "CronJob",
        "nightly",
        cronjob["metadata"]["uid"],
        True,
    )
    template = job["spec"]["template"]["spec"]
    assert template["restartPolicy"] == "OnFailure"
    assert template["terminationGracePeriodSeconds"] == 30
    assert [(c["name"], c["image"]) for c in template["containers"]] == [("nightly", "busybox")]


def test_create_serviceaccount(kubectl: Kubectl, namespace: str) -> None:
    _created(kubectl, namespace, "serviceaccount", "robot")
    account = kubectl.json("get", "serviceaccount", "robot", "-n", namespace)
    assert (account["kind"], account["metadata"]["name"]) == ("ServiceAccount", "robot")


def test_create_role_and_rolebinding(kubectl: Kubectl, namespace: str) -> None:
    _created(kubectl, namespace, "role", "r", "--verb=get", "--resource=pods")
    role = kubectl.json("get", "role", "r", "-n", namespace)
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]

    _created(
        kubectl,
        namespace,
        "rolebinding",
        "rb",
        "--role=r",
        "--user=alice",
        f"--serviceaccount={namespace}:robot",
    )
    binding = kubectl.json("get", "rolebinding", "rb", "-n", namespace)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"},
        {"kind": "ServiceAccount", "name": "robot", "namespace": namespace},
    ]


def test_create_clusterrole_and_clusterrolebinding(kubectl: Kubectl) -> None:
    name = "pb-" + uuid.uuid4().hex[:8]
    kubectl.run("create", "clusterrole", name, "--verb=get,list", "--resource=configmaps")
    role = kubectl.json("get", "clusterrole", name)
    assert role["rules"] == [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]

    kubectl.run("create", "clusterrolebinding", name, f"--clusterrole={name}", "--group=devs")
    binding = kubectl.json("get", "clusterrolebinding", name)
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": name,
    }
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}]


def test_create_service_clusterip(kubectl: Kubectl, namespace: str) -> None:
    _created(kubectl, namespace, "service", "clusterip", "svc", "--tcp=80:8080")
    service = kubectl.json("get", "service", "svc", "-n", namespace)
    spec = service["spec"]
    assert spec["type"] == "ClusterIP"
    assert spec["selector"] == {"app": "svc"}
    assert [(p["name"], p["port"], p["targetPort"], p["protocol"]) for p in spec["ports"]] == [
        ("80-8080", 80, 8080, "TCP")
    ]


def test_unsupported_protobuf_kind_gets_415_with_a_hint(
    devcluster: DevclusterProcess, namespace: str
) -> None:
    def length_delimited(number: int, payload: bytes) -> bytes:
        return bytes([number << 3 | 2, len(payload)]) + payload

    type_meta = length_delimited(1, b"policy/v1") + length_delimited(2, b"PodDisruptionBudget")
    request = urllib.request.Request(
        f"{devcluster.url}/api/v1/namespaces/{namespace}/configmaps",
        data=MAGIC + length_delimited(1, type_meta),
        headers={"Content-Type": "application/vnd.kubernetes.protobuf", "Accept": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=10)
    assert raised.value.code == 415
    status = json.loads(raised.value.read())
    assert status["reason"] == "UnsupportedMediaType"
    assert "ConfigMap (v1)" in status["message"]
    assert "as application/json" in status["message"]
