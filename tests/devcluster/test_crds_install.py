"""``syncflow crds``: prints offline, installs into a real devcluster, and the schema keeps every field."""

from __future__ import annotations

import copy
import json
import os
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from syncflow.api.crdgen import all_crds
from tests.support.devcluster import VENV_BIN, DevclusterProcess, Kubectl
from tests.support.publishedresources import EXAMPLE

pytestmark = pytest.mark.integration

CRD = "publishedresources.syncagent.kcp.io"
GROUP, VERSION, PLURAL = "syncagent.kcp.io", "v1alpha1", "publishedresources"


def _syncflow(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VENV_BIN / "syncflow"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def installed(devcluster: DevclusterProcess) -> subprocess.CompletedProcess[str]:
    result = _syncflow("crds", "--apply", "--kubeconfig", str(devcluster.kubeconfig), "--timeout", "20")
    assert result.returncode == 0, result.stderr
    return result


def _example(name: str) -> dict[str, Any]:
    obj = copy.deepcopy(EXAMPLE)
    del obj["status"]
    obj["metadata"]["name"] = name
    return obj


def test_crds_prints_every_crd_offline(tmp_path: Path) -> None:
    result = _syncflow("crds", "--mode", "all", env={"KUBECONFIG": str(tmp_path / "missing")})
    assert result.returncode == 0, result.stderr
    assert list(yaml.safe_load_all(result.stdout)) == all_crds()


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("publish", "PublishedResource"),
        ("workload", "SyncTarget"),
        ("edge", "EdgeSyncConfig"),
        ("clusters", "Cluster"),
    ],
)
def test_each_mode_gets_only_its_own_crds(mode: str, kind: str) -> None:
    result = _syncflow("crds", "--mode", mode)
    assert [d["spec"]["names"]["kind"] for d in yaml.safe_load_all(result.stdout)] == [kind]


def test_apply_installs_only_what_the_service_cluster_needs(
    installed: subprocess.CompletedProcess[str], kubectl: Kubectl
) -> None:
    """A service cluster is configured with PublishedResources: the other modes' CRDs stay out of it."""
    names = {crd["metadata"]["name"] for crd in kubectl.json("get", "crds")["items"]}
    assert CRD in names
    assert not names & {
        "synctargets.workload.kcp.io",
        "edgesyncconfigs.edge.kcp.io",
        "clusters.workload.kcp.dev",
    }


def test_apply_installs_and_waits_until_established(
    installed: subprocess.CompletedProcess[str], kubectl: Kubectl
) -> None:
    assert f"customresourcedefinition.apiextensions.k8s.io/{CRD} condition met" in installed.stdout
    kubectl.run("wait", "--for=condition=Established", f"crd/{CRD}", "--timeout=10s")
    served = kubectl.json("get", "crd", CRD)
    assert served["spec"]["versions"][0]["schema"] == all_crds()[0]["spec"]["versions"][0]["schema"]


def test_apply_again_replaces_a_changed_crd(
    installed: subprocess.CompletedProcess[str], kubectl: Kubectl
) -> None:
    patch = [{"op": "remove", "path": "/spec/versions/0/additionalPrinterColumns"}]
    kubectl.run("patch", "crd", CRD, "--type=json", "-p", json.dumps(patch))
    assert "additionalPrinterColumns" not in kubectl.json("get", "crd", CRD)["spec"]["versions"][0]
    again = _syncflow("crds", "--apply", "--kubeconfig", str(kubectl.kubeconfig))
    assert again.returncode == 0, again.stderr
    assert f"customresourcedefinition.apiextensions.k8s.io/{CRD} configured" in again.stdout
    served = kubectl.json("get", "crd", CRD)["spec"]["versions"][0]
    assert (
        served["additionalPrinterColumns"] == all_crds()[0]["spec"]["versions"][0]["additionalPrinterColumns"]
    )


def test_example_keeps_every_field_through_the_server(
    installed: subprocess.CompletedProcess[str], kubectl: Kubectl, tmp_path: Path
) -> None:
    name = "pr-" + uuid.uuid4().hex[:8]
    manifest = tmp_path / "pr.json"  # JSON: kubectl's YAML 1.1 would read the example's "y" as a boolean
    manifest.write_text(json.dumps(_example(name)))
    kubectl.run("apply", "-f", str(manifest))
    stored = kubectl.json("get", "publishedresources", name)
    assert stored["spec"] == _example(name)["spec"]
    assert stored["metadata"]["labels"] == {"agent": "certs"}


def test_status_subresource_keeps_schema_name_and_conditions(
    installed: subprocess.CompletedProcess[str], api_client: client.ApiClient
) -> None:
    objects = client.CustomObjectsApi(api_client)
    name = "pr-" + uuid.uuid4().hex[:8]
    created: dict[str, Any] = objects.create_cluster_custom_object(GROUP, VERSION, PLURAL, _example(name))  # type: ignore[assignment]
    objects.replace_cluster_custom_object_status(
        GROUP, VERSION, PLURAL, name, {**created, "status": EXAMPLE["status"]}
    )
    stored: dict[str, Any] = objects.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)  # type: ignore[assignment]
    assert stored["status"] == EXAMPLE["status"]


def test_invalid_enum_is_rejected_with_422(
    installed: subprocess.CompletedProcess[str], api_client: client.ApiClient
) -> None:
    body = _example("pr-" + uuid.uuid4().hex[:8])
    body["spec"]["projection"]["scope"] = "Galaxy"
    with pytest.raises(ApiException) as info:
        client.CustomObjectsApi(api_client).create_cluster_custom_object(GROUP, VERSION, PLURAL, body)
    assert info.value.status == 422
    causes = json.loads(info.value.body or "{}")["details"]["causes"]
    assert any(c["field"] == "spec.projection.scope" and "Galaxy" in c["message"] for c in causes), causes


def test_unreachable_cluster_fails_with_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    result = _syncflow("crds", "--apply", "--kubeconfig", str(kubeconfig))
    assert result.returncode != 0
    assert f"unable to connect to the server http://127.0.0.1:{port}: Connection refused" in result.stderr


@pytest.mark.parametrize(
    ("content", "extra", "expected"),
    [
        (None, (), "no such file or directory"),
        ("clusters: [", (), "invalid configuration in"),
        ("apiVersion: v1\nkind: Config\ncontexts: []\n", ("--context", "nope"), "invalid configuration in"),
    ],
)
def test_bad_kubeconfig_fails_with_a_clear_error(
    tmp_path: Path, content: str | None, extra: tuple[str, ...], expected: str
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    if content is not None:
        kubeconfig.write_text(content)
    result = _syncflow("crds", "--apply", "--kubeconfig", str(kubeconfig), *extra)
    assert result.returncode != 0
    assert expected in result.stderr
    assert str(kubeconfig) in result.stderr
