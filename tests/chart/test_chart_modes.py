"""The chart in workload, edge and clusters mode: each renders valid objects, runs its mode's command
with flags the real click command accepts (parsed into the settings the processes would run with), as
its bootstrap's manifest does, grants at least the rights of that manifest, and says which value is
missing. Publish mode is tested in test_chart.py."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import kubernetes_validate
import pytest
import yaml

from syncflow.bootstrap import manifest
from syncflow.bootstrap.manifest import Installation
from syncflow.cli import main
from syncflow.config import Settings
from syncflow.modes.clusters.identity import SyncedType
from syncflow.modes.clusters.manifest import syncer_manifest
from syncflow.modes.edge.bootstrap import EdgeBootstrap, pcluster_manifest
from syncflow.modes.workload import bootstrap as workload_bootstrap
from syncflow.modes.workload.discovery import CRD_TYPE, TypeRef
from syncflow.runtime import agentcli
from tests.chart.rendering import (
    CHART,
    FULLNAME,
    KUBE_VERSIONS,
    NAMESPACE,
    RELEASE,
    REQUIRED,
    by_kind,
    container,
    env,
    helm,
    render,
)
from tests.support.devcluster import DevclusterProcess, Kubectl, start_devcluster
from tests.support.processes import REPO

Obj = dict[str, Any]
KCP = {"kcpKubeconfig": "kcp-kubeconfig"}
CHART_KCP_KUBECONFIG = "/etc/syncflow/kcp/kubeconfig"
ROLES = ("watch", "worker", "beat")

MODES: dict[str, Obj] = {
    "workload": {
        **KCP,
        "mode": "workload",
        "workload": {"syncTargetName": "east", "syncTargetUID": "uid-1", "workspaceCluster": "root:org:ws"},
        "rbac": {
            "syncedResources": [
                {"apiGroups": ["apps"], "resources": ["deployments"]},
                {"apiGroups": [""], "resources": ["services"]},
                {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"]},
                {"apiGroups": ["example.com"], "resources": ["widgets"]},
            ]
        },
    },
    "edge": {**KCP, "mode": "edge", "agentName": "edge-1", "edge": {"workspace": "root:edge:mb-1"}},
    "clusters": {
        **KCP,
        "mode": "clusters",
        "clusters": {
            "workspaceCluster": "root:org:ws",
            "resources": ["deployments.apps", "configmaps"],
            "allowLinkLocalServers": True,
        },
    },
    "clusters-pull": {
        **KCP,
        "mode": "clusters",
        "clusters": {
            "workspaceCluster": "root:org:ws",
            "resources": ["deployments.apps", "configmaps"],
            "onlyCluster": "east",
        },
    },
}

RBAC = [
    ("ClusterRole", f"{FULLNAME}:{NAMESPACE}"),
    ("ClusterRoleBinding", f"{FULLNAME}:{NAMESPACE}"),
    ("Role", FULLNAME),
    ("RoleBinding", FULLNAME),
]


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[Obj]]:
    return {name: render(values) for name, values in MODES.items()}


def settings_of(c: Obj, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], Settings]:
    """Parse a container's args with the real click command and load the settings its process would
    run with, in its environment (the Pod's namespace for a ``fieldRef``): the command's options
    (role, workers, data dir) and the settings."""
    for name in [n for n in os.environ if n.startswith("SYNCFLOW_")]:
        monkeypatch.delenv(name)
    for variable in c.get("env", []):
        if "value" not in variable:
            assert variable["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace", variable
        monkeypatch.setenv(variable["name"], variable.get("value", NAMESPACE))
    [mode, *rest] = c["args"]
    command = main.get_command(click.Context(main), mode)
    assert isinstance(command, click.Command), mode
    params = dict(command.make_context(mode, list(rest)).params)
    options = {name: params.pop(name) for name in ("role", "workers", "data_dir")}
    settings = agentcli.load(mode, params.pop("config_file"), params.pop("verbosity"), {}, **params)
    return options, settings


def covered(rules: list[Obj], group: str, resource: str, verb: str) -> bool:
    """Whether RBAC ``rules`` allow ``verb`` on ``resource`` of ``group`` (``*`` matching anything)."""
    return any(
        {group, "*"} & set(r["apiGroups"])
        and {resource, "*"} & set(r["resources"])
        and {verb, "*"} & set(r["verbs"])
        for r in rules
        if "apiGroups" in r
    )


def assert_covers(chart: list[Obj], bootstrap: list[Obj]) -> None:
    """Every right of the bootstrap's ``rules`` is one the chart's grant."""
    for r in bootstrap:
        for group in r["apiGroups"]:
            for resource in r["resources"]:
                for verb in r["verbs"]:
                    assert covered(chart, group, resource, verb), (group, resource, verb)


def rules(objects: list[Obj], kind: str) -> list[Obj]:
    """The rules of the one ``kind`` (ClusterRole or Role) among ``objects``."""
    [found] = [o for o in objects if o["kind"] == kind]
    return list(found["rules"])


def deployment_container(objects: list[Obj], name: str) -> Obj:
    """The container of Deployment ``name`` of a bootstrap manifest."""
    [c] = by_kind(objects)[("Deployment", name)]["spec"]["template"]["spec"]["containers"]
    return dict(c)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_each_mode_renders_its_processes_and_rights(rendered: dict[str, list[Obj]], mode: str) -> None:
    kinds = sorted(by_kind(rendered[mode]))
    central = mode == "clusters"  # reaches kcp and every Cluster by kubeconfig: no rights here
    assert kinds == sorted(
        [
            ("ServiceAccount", FULLNAME),
            *([] if central else RBAC),
            ("Deployment", f"{FULLNAME}-watch"),
            ("Deployment", f"{FULLNAME}-worker"),
            ("Deployment", f"{FULLNAME}-beat"),
            ("Deployment", f"{FULLNAME}-redis"),
            ("Service", f"{FULLNAME}-redis"),
            ("PodDisruptionBudget", f"{FULLNAME}-watch"),
            ("PodDisruptionBudget", f"{FULLNAME}-worker"),
        ]
    )  # and no CRD: the modes' CRDs live in kcp
    for role in ROLES:
        variables = env(rendered[mode], role)
        assert variables["SYNCFLOW_KCP_KUBECONFIG"] == CHART_KCP_KUBECONFIG, role
        assert "SYNCFLOW_APIEXPORTENDPOINTSLICE_REF" not in variables
        mounts = {m["mountPath"]: m["name"] for m in container(rendered[mode], role)["volumeMounts"]}
        assert mounts["/etc/syncflow/kcp"] == "kcp-kubeconfig", role


@pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
@pytest.mark.parametrize("mode", sorted(MODES))
def test_each_mode_is_valid_against_the_kubernetes_schemas(
    rendered: dict[str, list[Obj]], mode: str, kube_version: str
) -> None:
    for obj in rendered[mode]:
        kubernetes_validate.validate(obj, kube_version, strict=True)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_each_role_runs_the_modes_command_with_flags_it_accepts(
    rendered: dict[str, list[Obj]], mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = MODES[mode]
    for role in ROLES:
        options, settings = settings_of(container(rendered[mode], role), monkeypatch)
        assert options["role"] == role
        assert settings.mode == values["mode"]
        assert settings.kcp_kubeconfig == CHART_KCP_KUBECONFIG
        assert settings.kubeconfig is None  # in-cluster
        # the central clusters syncflow's Lease is in the workspace, its state in each Cluster
        assert settings.namespace == ("default" if mode == "clusters" else NAMESPACE)
        assert settings.agent_name == values.get("agentName", RELEASE)
        assert settings.redis_url == f"redis://{FULLNAME}-redis:6379/0"
        assert settings.log_format == "json"
        if role == "worker":
            assert options["workers"] == 2
        if role == "beat":
            assert options["data_dir"] == "/var/lib/syncflow"  # the state volume
        if role != "beat":
            assert settings.health_address == "0.0.0.0:8080"
        block = values.get(mode.split("-", maxsplit=1)[0], {})
        if mode == "workload":
            assert (settings.sync_target_name, settings.sync_target_uid) == ("east", "uid-1")
            assert settings.workspace_cluster == "root:org:ws"
        elif mode == "edge":
            assert settings.workspace_cluster == "root:edge:mb-1"
        else:
            assert settings.workspace_cluster == block["workspaceCluster"]
            assert settings.cluster_resources == ["deployments.apps", "configmaps"]
            assert settings.only_cluster == (block.get("onlyCluster") or None)
            assert settings.allow_link_local_servers == block.get("allowLinkLocalServers", False)


def test_workload_runs_as_its_bootstrap_writes(
    rendered: dict[str, list[Obj]], monkeypatch: pytest.MonkeyPatch
) -> None:
    options = workload_bootstrap.WorkloadSync("east", workers=2)
    inst = Installation("kcp-syncer-east-1", "kcp-syncer-east-1")
    types = [TypeRef.parse(t) for t in ("v1/configmaps", "v1/secrets", "apps/v1/deployments", "v1/services")]
    types += [TypeRef(*CRD_TYPE), TypeRef("example.com", "v1", "widgets", from_crd=True)]
    objects = workload_bootstrap.physical_manifest(options, inst, "root:org:ws", "uid-1", types, "kubeconfig")

    assert_covers(rules(rendered["workload"], "ClusterRole"), rules(objects, "ClusterRole"))
    assert_covers(rules(rendered["workload"], "Role"), rules(objects, "Role"))
    for role in ROLES:
        chart_options, chart = settings_of(container(rendered["workload"], role), monkeypatch)
        wanted_options, wanted = settings_of(
            deployment_container(objects, f"{inst.name}-{role}"), monkeypatch
        )
        assert wanted.kcp_kubeconfig == manifest.KCP_KUBECONFIG  # its own mount path, the chart's differs
        for field in ("mode", "sync_target_name", "sync_target_uid", "workspace_cluster", "namespace"):
            assert getattr(chart, field) == getattr(wanted, field), (role, field)
        assert (chart_options["role"], chart_options["workers"]) == (
            wanted_options["role"],
            wanted_options["workers"],
        )


def test_edge_runs_as_its_bootstrap_writes(
    rendered: dict[str, list[Obj]], monkeypatch: pytest.MonkeyPatch
) -> None:
    inst = Installation("syncer-1", "kcp-edge-syncer-1")
    objects = pcluster_manifest(EdgeBootstrap("edge-1"), inst, "root:edge:mb-1", "kubeconfig")

    assert_covers(rules(rendered["edge"], "ClusterRole"), rules(objects, "ClusterRole"))
    _, wanted = settings_of(deployment_container(objects, f"{inst.name}-all"), monkeypatch)
    for role in ROLES:
        _, chart = settings_of(container(rendered["edge"], role), monkeypatch)
        for field in ("mode", "workspace_cluster", "agent_name", "namespace"):
            assert getattr(chart, field) == getattr(wanted, field), (role, field)


def test_pull_mode_clusters_runs_as_its_manifest_writes(
    rendered: dict[str, list[Obj]], monkeypatch: pytest.MonkeyPatch
) -> None:
    objects = syncer_manifest(
        "east",
        kcp_kubeconfig="kubeconfig",
        workspace="root:org:ws",
        agent=RELEASE,
        types=[SyncedType.parse("deployments.apps"), SyncedType.parse("configmaps")],
        namespace=NAMESPACE,
    )
    assert_covers(rules(rendered["clusters-pull"], "ClusterRole"), rules(objects, "ClusterRole"))
    assert_covers(rules(rendered["clusters-pull"], "Role"), rules(objects, "Role"))
    _, wanted = settings_of(deployment_container(objects, "syncflow-east-all"), monkeypatch)
    for role in ROLES:
        _, chart = settings_of(container(rendered["clusters-pull"], role), monkeypatch)
        fields = ("mode", "workspace_cluster", "only_cluster", "cluster_resources", "agent_name", "namespace")
        for field in fields:
            assert getattr(chart, field) == getattr(wanted, field), (role, field)


def test_rbac_coverage_check_catches_a_missing_right(rendered: dict[str, list[Obj]]) -> None:
    chart = rules(rendered["workload"], "ClusterRole")
    assert covered(chart, "example.com", "widgets/status", "update")
    assert not covered(chart, "example.com", "gadgets", "get")
    assert not covered(rules(rendered["clusters-pull"], "ClusterRole"), "", "namespaces", "delete")
    with pytest.raises(AssertionError):
        assert_covers(chart, [manifest.rule(["batch"], ["jobs"], ["create"])])


def values_examples(page: Path) -> list[Obj]:
    """The chart values examples of a documentation page: its YAML blocks that name a kcpKubeconfig."""
    blocks = [yaml.safe_load(b.split("```", 1)[0]) for b in page.read_text().split("```yaml\n")[1:]]
    return [b for b in blocks if isinstance(b, dict) and "kcpKubeconfig" in b]


@pytest.mark.parametrize(
    ("page", "modes"),
    [
        ("charts/syncflow/README.md", ["clusters", "clusters", "edge", "publish", "workload"]),
        ("docs/workload.md", ["workload"]),
        ("docs/edge.md", ["edge"]),
        ("docs/clusters.md", ["clusters"]),
    ],
)
def test_the_documented_values_render(page: str, modes: list[str]) -> None:
    examples = values_examples(REPO / page)
    assert sorted(e.get("mode", "publish") for e in examples) == modes
    for values in examples:
        objects = render(values)
        assert [o["kind"] for o in objects].count("Deployment") == 4, values


@pytest.mark.parametrize("mode", sorted(MODES))
def test_helm_lint_is_clean_in_each_mode(mode: str) -> None:
    report = helm.lint(CHART, MODES[mode], strict=True)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


@pytest.mark.parametrize(
    ("values", "missing"),
    [
        ({**KCP, "mode": "workload"}, "/workload/syncTargetName"),
        ({**KCP, "mode": "workload", "workload": {"syncTargetName": "east"}}, "/workload/syncTargetUID"),
        (
            {**KCP, "mode": "workload", "workload": {"syncTargetName": "east", "syncTargetUID": "u"}},
            "/workload/workspaceCluster",
        ),
        ({**KCP, "mode": "edge"}, "/edge/workspace"),
        ({**KCP, "mode": "clusters"}, "/clusters/workspaceCluster"),
        (
            {**MODES["clusters"], "clusters": {"workspaceCluster": "root:ws", "resources": []}},
            "/clusters/resources",
        ),
    ],
)
def test_the_schema_names_a_missing_mode_value(values: Obj, missing: str) -> None:
    with pytest.raises(helm.HelmValuesError) as caught:
        helm.Chart.load(CHART).validate_schema(values)
    assert f"at '{missing}'" in str(caught.value)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {**KCP, "mode": "workload"},
            "workload.syncTargetName (the SyncTarget to serve) is required in workload mode",
        ),
        ({**KCP, "mode": "edge"}, "edge.workspace (the mailbox workspace) is required in edge mode"),
        (
            {**KCP, "mode": "clusters"},
            "clusters.workspaceCluster (the workspace of the Clusters) is required",
        ),
        (
            {**MODES["workload"], **REQUIRED},
            "apiExportEndpointSliceName is a publish-mode value: unset it in workload mode",
        ),
        (
            {**MODES["edge"], "rbac": MODES["workload"]["rbac"]},
            "rbac.syncedResources is not used in edge mode: edge gets every right",
        ),
        (
            {**MODES["clusters"], "worker": {"queues": "sync"}},
            "worker.queues is a publish-mode value: clusters mode's workers consume every queue",
        ),
        (
            {"mode": "edge", "edge": {"workspace": "root:e"}},
            "kcpKubeconfig (a Secret with the kcp kubeconfig)",
        ),
    ],
)
def test_templates_name_a_missing_or_misplaced_value(values: Obj, message: str, tmp_path: Path) -> None:
    """What the schema cannot say, or a render without it (``--skip-schema-validation``: the chart
    without its schema here)."""
    unchecked = tmp_path / "syncflow"
    shutil.copytree(CHART, unchecked, ignore=shutil.ignore_patterns("values.schema.json"))
    with pytest.raises(helm.HelmError) as caught:
        render(values, unchecked)
    assert message in str(caught.value)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevclusterProcess, Kubectl]]:
    """A devcluster with the release namespace, and kubectl on it."""
    workdir = tmp_path_factory.mktemp("chart-devcluster")
    server = start_devcluster(workdir)
    try:
        kubectl = Kubectl(server.kubeconfig, workdir / "kube-cache")
        kubectl.run("create", "namespace", NAMESPACE)
        yield server, kubectl
    finally:
        server.stop()


@pytest.mark.parametrize("mode", ["publish", *sorted(MODES)])
@pytest.mark.integration
def test_each_mode_applies_to_a_cluster_in_a_server_side_dry_run(
    cluster: tuple[DevclusterProcess, Kubectl], mode: str
) -> None:
    _, kubectl = cluster
    objects = render(REQUIRED if mode == "publish" else MODES[mode])
    assert [o["kind"] for o in objects].count("Deployment") == 4  # watch, worker, beat, redis
    assert "PodDisruptionBudget" in {o["kind"] for o in objects}
    applied = kubectl.run("apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump_all(objects))
    lines = applied.stdout.splitlines()
    assert len(lines) == len(objects), applied.stdout
    assert all(line.endswith("(server dry run)") for line in lines), applied.stdout
    assert kubectl.json("get", "deployments", "-n", NAMESPACE)["items"] == []  # nothing was stored
