"""Bootstraps end to end: ``syncflow workload sync`` and ``syncflow edge bootstrap`` register a syncer in
kcp, their manifests apply cleanly to a cluster with kubectl (server-side dry run first, and again
unchanged), the kubeconfig they hold works in the workspace with exactly the rights it was given, and the
processes the manifests describe — run here with those credentials on both sides, as their pods would
— sync (issue 11 item 2; issue 13 item 6 and scenario 1)."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
import yaml

from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from tests.bootstrap.conftest import BootstrapEnv, by_kind, status_of, unique
from tests.support.kcp import bind_compute
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

SYNC_TARGETS = "/apis/workload.kcp.io/v1alpha1/synctargets"
CONFIGS = "/apis/edge.kcp.io/v1alpha1/edgesyncconfigs"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def as_syncer(kubeconfig: Path, workspace: str | None = None) -> JsonApi:
    """A client with the syncer's credentials (optionally aimed at another workspace)."""
    api = load_client(str(kubeconfig))
    return JsonApi(for_cluster(api, workspace) if workspace else api)


def names(manifest: Path) -> set[tuple[str, str]]:
    return {(o["kind"], o["metadata"]["name"]) for o in yaml.safe_load_all(manifest.read_text())}


def logs(env: BootstrapEnv) -> str:
    return "\n".join(
        f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(env.work.rglob("*.log"))
    )


def test_workload_sync_registers_a_syncer_whose_manifest_runs_it_with_only_its_rights(
    bootstrap_env: BootstrapEnv,
) -> None:
    env = bootstrap_env
    ws = env.create_workspace("root:org:ws")
    bind_compute(ws)
    output = env.work / "syncer.yaml"

    result = env.syncflow("workload", "sync", "east", "--workspace", "root:org:ws", "-o", str(output))

    assert stat.S_IMODE(output.stat().st_mode) == 0o600
    sync_target = ws.get(f"{SYNC_TARGETS}/east")
    assert sync_target["spec"]["supportedAPIExports"] == [
        {"export": "kubernetes", "resource": "apps/v1/deployments"},
        {"export": "kubernetes", "resource": "v1/services"},
    ]
    installed = env.install(output)
    syncer = installed.name
    assert syncer.startswith("kcp-syncer-east-") and installed.namespace == syncer
    assert f"serviceaccount/{syncer} created" in result.stderr
    account = ws.get(f"/api/v1/namespaces/default/serviceaccounts/{syncer}")
    assert account["metadata"]["ownerReferences"][0]["uid"] == sync_target["metadata"]["uid"]

    # the syncer's kcp credentials: what it needs in its workspace, nothing else
    kcp = as_syncer(installed.kcp_kubeconfig)
    assert kcp.get(f"{SYNC_TARGETS}/east")["metadata"]["uid"] == sync_target["metadata"]["uid"]
    assert status_of(lambda: kcp.get("/apis/apps/v1/deployments")) == 200
    assert status_of(lambda: kcp.get(f"{RBAC}/clusterroles")) == 403
    assert status_of(lambda: kcp.create("/api/v1/namespaces", {"metadata": {"name": "nope"}})) == 403
    ws.create(SYNC_TARGETS, {"metadata": {"name": "west"}, "spec": {}})
    assert status_of(lambda: kcp.merge_patch(f"{SYNC_TARGETS}/west/status", {"status": {}})) == 403
    assert status_of(lambda: as_syncer(installed.kcp_kubeconfig, "root:org").get("/api/v1/namespaces")) in (
        401,
        403,
    )
    # ... and in the physical cluster
    cluster = as_syncer(installed.cluster_kubeconfig)
    assert status_of(lambda: cluster.get("/apis/apps/v1/deployments")) == 200
    assert status_of(lambda: cluster.get(f"{RBAC}/clusterroles")) == 403
    assert status_of(lambda: cluster.get("/api/v1/namespaces/default/secrets")) == 200  # a synced type

    # the manifest's processes, with those credentials, sync the workspace into the physical cluster
    for role in ("worker", "beat", "watch"):
        env.run(installed, f"{syncer}-{role}")
    wait_for(
        lambda: any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in (ws.get(f"{SYNC_TARGETS}/east").get("status") or {}).get("conditions") or []
        ),
        timeout=60,
        what=lambda: f"the SyncTarget to be Ready\n{logs(env)}",
    )
    ws.create("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "settings"}, "data": {"a": "1"}})
    ws.create(
        "/apis/apps/v1/namespaces/default/deployments",
        {
            "metadata": {"name": "nginx"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "nginx"}},
                "template": {
                    "metadata": {"labels": {"app": "nginx"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
                },
            },
        },
    )

    def copy(plural: str, name: str, group: str = "") -> dict[str, object] | None:
        path = f"/apis/{group}/v1/{plural}" if group else f"/api/v1/{plural}"
        items = env.cluster.get(path).get("items") or []
        return next(
            (
                o
                for o in items
                if o["metadata"]["name"] == name and o["metadata"]["namespace"].startswith("kcp-")
            ),
            None,
        )

    wait_for(
        lambda: copy("configmaps", "settings"), timeout=60, what=lambda: f"the ConfigMap's copy\n{logs(env)}"
    )
    deployment = wait_for(
        lambda: copy("deployments", "nginx", "apps"),
        timeout=60,
        what=lambda: f"the Deployment's copy\n{logs(env)}",
    )
    assert isinstance(deployment, dict)
    namespace = deployment["metadata"]["namespace"]
    env.cluster.merge_patch(
        f"/apis/apps/v1/namespaces/{namespace}/deployments/nginx/status",
        {"status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}},
    )
    wait_for(
        lambda: (
            (ws.get("/apis/apps/v1/namespaces/default/deployments/nginx").get("status") or {}).get(
                "readyReplicas"
            )
            == 1
        ),
        timeout=60,
        what=lambda: f"the Deployment's status back in kcp\n{logs(env)}",
    )
    logged = "".join(p.read_text(errors="replace") for p in env.work.glob("*.log"))
    # a refusal: syncflow describes a 403 as kubectl does ("403 Forbidden: …") and the API server's
    # message says "forbidden"; a bare "403" may be a timestamp's milliseconds or a task id's digits
    assert not re.search(r"forbidden", logged, re.IGNORECASE), logged[-4000:]


def test_workload_sync_again_finds_the_sync_target_and_keeps_the_account(bootstrap_env: BootstrapEnv) -> None:
    env = bootstrap_env
    ws = env.create_workspace("root:org:ws")
    first, second = env.work / "first.yaml", env.work / "second.yaml"
    env.syncflow("workload", "sync", "east", "--workspace", "root:org:ws", "-o", str(first))
    uid = ws.get(f"{SYNC_TARGETS}/east")["metadata"]["uid"]

    again = env.syncflow(
        "workload",
        "sync",
        "east",
        "--workspace",
        "root:org:ws",
        "--resources",
        "apps/v1/deployments",
        "--labels",
        "region=eu",
        "--all-in-one",
        "-o",
        str(second),
    )

    found = ws.get(f"{SYNC_TARGETS}/east")
    assert found["metadata"]["uid"] == uid
    assert found["metadata"]["labels"] == {"region": "eu"}
    assert found["spec"]["supportedAPIExports"] == [
        {"export": "kubernetes", "resource": "apps/v1/deployments"}
    ]
    assert "synctarget/east configured" in again.stderr
    syncer = next(name for kind, name in names(first) if kind == "ServiceAccount")
    assert (("ServiceAccount", syncer) in names(second)) and (
        ("Deployment", f"{syncer}-all") in names(second)
    )
    role = ws.get(f"{RBAC}/clusterroles/{syncer}")
    assert not any("services" in rule["resources"] for rule in role["rules"]), (
        "rights follow the synced types"
    )


def test_workload_sync_names_a_workspace_that_is_not_there(bootstrap_env: BootstrapEnv) -> None:
    result = bootstrap_env.syncflow(
        "workload",
        "sync",
        "east",
        "--workspace",
        "root:missing",
        "-o",
        str(bootstrap_env.work / "x.yaml"),
        check=False,
    )
    assert result.returncode == 1
    assert "root:missing" in result.stderr and "Traceback" not in result.stderr
    assert not (bootstrap_env.work / "x.yaml").exists()


def test_edge_bootstrap_registers_a_syncer_that_runs_from_its_manifest(bootstrap_env: BootstrapEnv) -> None:
    """Scenario 1 of issue 13: a mailbox workspace given by name, bootstrap → apply → run."""
    env = bootstrap_env
    mailbox = env.create_workspace("root:edge:mb1")
    env.create_workspace("root:edge:mb2")
    name = unique("pc")
    output = env.work / "edge-syncer.yaml"

    env.syncflow("edge", "bootstrap", name, "--workspace", "root:edge:mb1", "-o", str(output))

    config = mailbox.get(f"{CONFIGS}/{name}")
    syncer = config["metadata"]["annotations"]["edge.kcp.io/syncer-id"]
    assert syncer.startswith("syncer-")
    installed = env.install(output)
    assert installed.namespace == f"kcp-edge-{syncer}" and installed.name == syncer
    assert by_kind(installed.objects)[("Deployment", f"{syncer}-all")]

    # everything in its mailbox, nothing elsewhere
    kcp = as_syncer(installed.kcp_kubeconfig)
    assert status_of(lambda: kcp.create("/api/v1/namespaces", {"metadata": {"name": "shop"}})) == 200
    assert status_of(lambda: kcp.get(f"{RBAC}/clusterroles")) == 200
    assert status_of(
        lambda: as_syncer(installed.kcp_kubeconfig, "root:edge:mb2").get("/api/v1/namespaces")
    ) in (
        401,
        403,
    )
    assert status_of(lambda: as_syncer(installed.kcp_kubeconfig, "root").get("/api/v1/namespaces")) in (
        401,
        403,
    )

    # the all-in-one process of the manifest, with those credentials, downsyncs what the config selects
    env.run(installed, f"{syncer}-all")
    mailbox.create(
        "/api/v1/namespaces/shop/configmaps", {"metadata": {"name": "menu"}, "data": {"soup": "yes"}}
    )
    mailbox.merge_patch(
        f"{CONFIGS}/{name}",
        {
            "spec": {
                "downSyncedResources": [
                    {"version": "v1", "kind": "Namespace", "name": "shop"},
                    {"version": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "menu"},
                ]
            }
        },
    )
    wait_for(
        lambda: status_of(lambda: env.cluster.get("/api/v1/namespaces/shop/configmaps/menu")) == 200,
        timeout=90,
        what=lambda: f"the ConfigMap downsynced by the bootstrapped syncer\n{logs(env)}",
    )
    assert env.cluster.get("/api/v1/namespaces/shop/configmaps/menu")["data"] == {"soup": "yes"}

    again = env.work / "again.yaml"
    env.syncflow("edge", "bootstrap", name, "--workspace", "root:edge:mb1", "-o", str(again))
    assert by_kind(list(yaml.safe_load_all(again.read_text())))[("ServiceAccount", syncer)]


def test_bootstraps_take_kcps_plugin_flags_and_your_kubeconfig(bootstrap_env: BootstrapEnv) -> None:
    """As 'kubectl kcp workload edge-sync NAME --syncer-image IMAGE -o FILE' runs: kcp from $KUBECONFIG's
    current context, kcp's names for the image and output flags."""
    env = bootstrap_env
    env.create_workspace("root:edge:plugin")
    name = unique("pc")
    output = env.work / f"{name}.yaml"
    image = "registry.example/syncflow:plugin"
    args = ("edge", "bootstrap", name, "--workspace", "root:edge:plugin", "--syncer-image", image)
    result = env.syncflow(*args, "--output-file", str(output), as_kubectl=True)
    assert f"Using kcp from {env.kcp_dc.kubeconfig}" in result.stderr
    deployments = [o for o in yaml.safe_load_all(output.read_text()) if o and o["kind"] == "Deployment"]
    images = {c["image"] for d in deployments for c in d["spec"]["template"]["spec"]["containers"]}
    assert image in images and not {i for i in images if "syncflow" in i} - {image}
