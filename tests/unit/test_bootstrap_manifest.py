"""The bootstraps' manifests as pure data: valid Kubernetes objects, the names kcp's and KubeStellar's
plugins use, the syncer's processes pinned to their SyncTarget or mailbox, rights scoped to the synced
types, and a kubeconfig that carries only the syncer's token."""

from __future__ import annotations

import base64
import stat
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from syncflow import __version__
from syncflow.bootstrap import manifest
from syncflow.bootstrap.errors import BootstrapError
from syncflow.bootstrap.kubeconfig import Server, kubeconfig
from syncflow.bootstrap.manifest import Installation
from syncflow.modes.edge import bootstrap as edge
from syncflow.modes.workload import bootstrap as workload
from syncflow.modes.workload.discovery import TypeRef
from tests.support.processes import REPO

Obj = dict[str, Any]
UID = "0b8c5f1e-7d2a-4c1e-9a51-1f0e6f3b2a10"
TYPES = [
    TypeRef("", "v1", "configmaps"),
    TypeRef("", "v1", "secrets"),
    TypeRef("apps", "v1", "deployments"),
    TypeRef("", "v1", "services"),
]
KCP_KUBECONFIG = kubeconfig(Server("https://kcp:6443/clusters/root:org:ws", "Q0E="), "t0ken", "default")


def by_kind(objects: list[Obj]) -> dict[tuple[str, str], Obj]:
    return {(o["kind"], o["metadata"]["name"]): o for o in objects}


def workload_manifest(**options: Any) -> list[Obj]:
    sync = workload.WorkloadSync("east", **options)
    inst = Installation("kcp-syncer-east-abcd1234", sync.namespace or "kcp-syncer-east-abcd1234", sync.image)
    return workload.physical_manifest(sync, inst, "root:org:ws", UID, TYPES, KCP_KUBECONFIG)


def edge_manifest(**options: Any) -> list[Obj]:
    boot = edge.EdgeBootstrap("pc1", **options)
    syncer = "syncer-4f1d2c3b-0000-4000-8000-000000000001"
    inst = Installation(syncer, boot.namespace or f"kcp-edge-{syncer}", boot.image)
    return edge.pcluster_manifest(boot, inst, "root:edge:mb1", KCP_KUBECONFIG)


@pytest.mark.parametrize(
    "objects",
    [workload_manifest(), workload_manifest(all_in_one=True), edge_manifest()],
    ids=["workload", "workload-all-in-one", "edge"],
)
def test_every_object_is_valid_for_kubernetes(objects: list[Obj]) -> None:
    for obj in objects:
        kubernetes_validate.validate(obj, "1.32.0", strict=True)
    namespace = objects[0]
    assert namespace["kind"] == "Namespace"
    assert {
        o["metadata"].get("namespace")
        for o in objects[1:]
        if o["kind"] not in ("ClusterRole", "ClusterRoleBinding")
    } == {namespace["metadata"]["name"]}


def test_workload_runs_watch_worker_and_beat_pinned_to_the_sync_target() -> None:
    objects = by_kind(workload_manifest(workers=3))
    deployments = {name: obj for (kind, name), obj in objects.items() if kind == "Deployment"}
    assert sorted(deployments) == [
        "kcp-syncer-east-abcd1234-beat",
        "kcp-syncer-east-abcd1234-watch",
        "kcp-syncer-east-abcd1234-worker",
        "syncflow-redis",
    ]
    for role in ("watch", "worker", "beat"):
        pod = deployments[f"kcp-syncer-east-abcd1234-{role}"]["spec"]["template"]["spec"]
        container = pod["containers"][0]
        args = container["args"]
        assert args[:3] == ["workload", "--role", role]
        flags = dict(zip(args[3::2], args[4::2], strict=False))
        assert flags["--sync-target-uid"] == UID
        assert flags["--sync-target-name"] == "east"
        assert flags["--workspace-cluster"] == "root:org:ws"
        assert flags["--kcp-kubeconfig"] == "/kcp/kubeconfig"
        assert container["image"] == f"syncflow:{__version__}"
        assert pod["serviceAccountName"] == "kcp-syncer-east-abcd1234"
        assert {"name": "kcp-config", "secret": {"secretName": "kcp-syncer-east-abcd1234"}} in pod["volumes"]
        env = {e["name"]: e.get("value") or e.get("valueFrom") for e in container["env"]}
        assert env["SYNCFLOW_REDIS_URL"] == "redis://syncflow-redis:6379/0"
        assert env["SYNCFLOW_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
        assert env["SYNCFLOW_AGENT_NAME"] == "kcp-syncer-east-abcd1234"
    assert (
        "--workers"
        in deployments["kcp-syncer-east-abcd1234-worker"]["spec"]["template"]["spec"]["containers"][0]["args"]
    )
    assert ("Service", "syncflow-redis") in objects


def test_all_in_one_and_image_and_namespace_options() -> None:
    objects = by_kind(
        workload_manifest(all_in_one=True, image="registry.example/syncflow:1", namespace="syncers")
    )
    deployments = [name for kind, name in objects if kind == "Deployment"]
    assert sorted(deployments) == ["kcp-syncer-east-abcd1234-all", "syncflow-redis"]
    container = objects[("Deployment", "kcp-syncer-east-abcd1234-all")]["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["image"] == "registry.example/syncflow:1"
    assert container["args"][:3] == ["workload", "--role", "all"]
    assert objects[("Namespace", "syncers")]["metadata"]["name"] == "syncers"


def test_the_physical_rights_cover_the_synced_types_and_nothing_else_cluster_wide() -> None:
    role = by_kind(workload_manifest())[("ClusterRole", "kcp-syncer-east-abcd1234")]
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert ("apps", "deployments") in granted and ("apps", "deployments/status") in granted
    assert ("", "services") in granted and ("", "namespaces") in granted
    assert not any(g == "*" or r == "*" for g, r in granted)
    assert ("rbac.authorization.k8s.io", "clusterroles") not in granted
    own = by_kind(workload_manifest())[("Role", "kcp-syncer-east-abcd1234")]
    assert {r for rule in own["rules"] for r in rule["resources"]} == {"leases", "secrets", "events"}


def test_the_kcp_rights_let_the_syncer_write_only_its_own_sync_target() -> None:
    """Its status (heartbeats, types) and its finalizer, which keeps the SyncTarget until the syncer
    released what it synced; no other SyncTarget."""
    rules = workload.kcp_rules("east", TYPES)
    status = [r for r in rules if "synctargets/status" in r["resources"]]
    assert status == [
        {
            "apiGroups": ["workload.kcp.io"],
            "resources": ["synctargets/status"],
            "verbs": ["get", "update", "patch"],
            "resourceNames": ["east"],
        }
    ]
    writes = {
        (g, r)
        for rule in rules
        if {"update", "patch"} & set(rule["verbs"])
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }
    own = [r for r in rules if r["resources"] == ["synctargets"] and {"update", "patch"} & set(r["verbs"])]
    assert own == [
        {
            "apiGroups": ["workload.kcp.io"],
            "resources": ["synctargets"],
            "verbs": ["update", "patch"],
            "resourceNames": ["east"],
        }
    ]
    assert ("apps", "deployments/status") in writes
    assert all("*" not in rule["verbs"] for rule in rules)


def test_edge_runs_one_all_in_one_syncer_with_every_right_in_its_p_cluster() -> None:
    objects = by_kind(edge_manifest(workers=4))
    syncer = "syncer-4f1d2c3b-0000-4000-8000-000000000001"
    assert ("Namespace", f"kcp-edge-{syncer}") in objects
    deployment = objects[("Deployment", f"{syncer}-all")]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    assert args[:3] == ["edge", "--role", "all"]
    assert args[args.index("--workspace") + 1] == "root:edge:mb1"
    assert args[args.index("--workers") + 1] == "4"
    assert {"name": "SYNCFLOW_AGENT_NAME", "value": "pc1"} in container["env"]
    assert {"mountPath": "/kcp/", "name": "kcp-config", "readOnly": True} in container["volumeMounts"]
    assert objects[("ClusterRole", syncer)]["rules"] == [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    ]


def test_the_kubeconfig_secret_holds_only_the_syncers_token() -> None:
    secret = by_kind(workload_manifest())[("Secret", "kcp-syncer-east-abcd1234")]
    config = yaml.safe_load(base64.b64decode(secret["data"]["kubeconfig"]))
    assert config["clusters"][0]["cluster"] == {
        "server": "https://kcp:6443/clusters/root:org:ws",
        "certificate-authority-data": "Q0E=",
    }
    assert config["users"] == [{"name": "syncer", "user": {"token": "t0ken"}}]
    assert config["contexts"][0]["context"]["namespace"] == "default"


def test_redis_matches_the_charts_image_and_is_bounded() -> None:
    values = yaml.safe_load((REPO / "charts" / "syncflow" / "values.yaml").read_text())
    image = values["redis"]["image"]
    assert manifest.REDIS_IMAGE.split(":") == [image["repository"], image["tag"]]
    redis = by_kind(workload_manifest())[("Deployment", "syncflow-redis")]
    args = redis["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"


def test_resources_and_apiexports_become_supported_exports() -> None:
    options = workload.WorkloadSync(
        "east", resources=("apps/v1/deployments",), apiexports=("root:acme:widgets", "local")
    )
    assert workload.supported_exports(options) == [
        {"export": "kubernetes", "resource": "apps/v1/deployments"},
        {"export": "widgets", "path": "root:acme"},
        {"export": "local"},
    ]
    with pytest.raises(BootstrapError, match="--resources"):
        workload.supported_exports(workload.WorkloadSync("east", resources=("Deployments.apps",)))


def test_the_manifest_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "syncer.yaml"
    path.write_text("old")
    path.chmod(0o644)
    manifest.write(workload_manifest(), str(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    documents = list(yaml.safe_load_all(path.read_text()))
    assert [d["kind"] for d in documents][:2] == ["Namespace", "ServiceAccount"]
