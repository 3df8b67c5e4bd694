"""``syncflow demo --mode edge``: KubeStellar 0.14's feasibility scenarios on syncflow, step by step.

A workload-management workspace exporting PolicyReports, a mailbox workspace binding them, a p-cluster,
and ``syncflow edge`` (watch, worker, beat) between mailbox and p-cluster. A Kyverno-like application is
deployed from the mailbox just by manifests and an EdgeSyncConfig; its denatured PolicyReport CRD is
renatured in the p-cluster; state reported there comes back; a report written in the p-cluster is
upsynced by polling and read from the workload-management workspace through the export. The demo plays
the p-cluster's controllers (Kyverno, and kube's own where the devcluster runs none) and says so.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from syncflow.api import edgesyncconfig
from syncflow.api.crdgen import crd
from syncflow.demo import kcp, kyverno, launch
from syncflow.demo.play import DemoRun
from syncflow.kube.clients import for_url, load_client
from syncflow.kube.jsonapi import JsonApi, resource_path

Obj = dict[str, Any]
WMW = "root:edge"
MAILBOX = "root:edge:mb1"
CONFIG = "kyverno"
CONFIGS = "/apis/edge.kcp.io/v1alpha1/edgesyncconfigs"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NAMESPACE = "syncflow"
LOGS = ("watch", "worker", "beat")
PLURALS = {
    "CustomResourceDefinition": "customresourcedefinitions",
    "Namespace": "namespaces",
    "ServiceAccount": "serviceaccounts",
    "ConfigMap": "configmaps",
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "Service": "services",
    "Deployment": "deployments",
    "Policy": "policies",
    "PolicyReport": "policyreports",
}


def path_of(obj: Obj, collection: bool = False) -> str:
    """The API path of ``obj`` (or of its collection)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    meta = obj["metadata"]
    name = "" if collection else meta["name"]
    return resource_path(group, version, PLURALS[obj["kind"]], meta.get("namespace", ""), name)


class _Edge:
    """The running environment of the scenario."""

    def __init__(self, run: DemoRun, wmw: JsonApi, mailbox: JsonApi, pcluster: JsonApi) -> None:
        self.run = run
        self.wmw = wmw
        self.mailbox = mailbox
        self.pcluster = pcluster


def scenario(run: DemoRun) -> list[str]:
    """Start kcp, the p-cluster and the edge syncer; play the scenarios; return the hints."""
    progress, stack = run.progress, run.stack
    kcp_dc, pcluster_dc, root = kcp.start_clusters(run, "pcluster", "p-cluster")
    wmw = kcp.create_workspaces(root, WMW)
    mailbox = kcp.create_workspaces(root, MAILBOX)
    kcp.install(mailbox, [crd(edgesyncconfig.API_TYPE)], run.timeout)
    wmw.create("/apis/apis.kcp.io/v1alpha1/apiresourceschemas", kyverno.report_schema())
    wmw.create(
        "/apis/apis.kcp.io/v1alpha1/apiexports",
        {
            "metadata": {"name": kyverno.EXPORT},
            "spec": {"latestResourceSchemas": [kyverno.report_schema()["metadata"]["name"]]},
        },
    )
    reports = f"/apis/{kyverno.REPORT_GROUP}/{kyverno.REPORT_VERSION}"
    kcp.bind(run, mailbox, WMW, kyverno.EXPORT, reports)
    kcp.bind(run, mailbox, "root:compute", "kubernetes", "/apis/apps/v1")
    progress.done(
        f"kcp: workload-management workspace {WMW} exports PolicyReports; mailbox {MAILBOX} binds them and "
        "root:compute's kubernetes export (Deployments, Services), and has the EdgeSyncConfig CRD"
    )
    pcluster = JsonApi(load_client(str(pcluster_dc.kubeconfig)))
    pcluster.create("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    launch.start_roles(
        stack,
        "edge",
        {
            "SYNCFLOW_REDIS_URL": run.redis_url,
            "SYNCFLOW_AGENT_NAME": run.agent,
            "SYNCFLOW_KCP_KUBECONFIG": str(kcp_dc.kubeconfig),
            "SYNCFLOW_KUBECONFIG": str(pcluster_dc.kubeconfig),
            "SYNCFLOW_WORKSPACE_CLUSTER": MAILBOX,
            "SYNCFLOW_NAMESPACE": NAMESPACE,
            "SYNCFLOW_UPSYNC_PERIOD": "2",
            "SYNCFLOW_STATUS_PERIOD": "3",
            "SYNCFLOW_BACKOFF_CAP": "2",
        },
        run.metrics,
    )
    progress.done("syncflow edge running: watch, worker and beat")
    env = _Edge(run, wmw, mailbox, pcluster)
    _deploy(env)
    _renatured(env)
    _reported_state(env)
    _upsync(env)
    kubeconfigs = {
        f"mailbox {MAILBOX}": launch.workspace_kubeconfig(
            kcp_dc.kubeconfig, stack.workdir / "kcp-mailbox.kubeconfig", f"{kcp_dc.url}/clusters/{MAILBOX}"
        ),
        f"workload management {WMW}": launch.workspace_kubeconfig(
            kcp_dc.kubeconfig, stack.workdir / "kcp-wmw.kubeconfig", f"{kcp_dc.url}/clusters/{WMW}"
        ),
        "p-cluster": pcluster_dc.kubeconfig,
    }
    return _hints(kubeconfigs)


def _deploy(env: _Edge) -> None:
    """The application by manifests, then its EdgeSyncConfig; every object appears in the p-cluster."""
    run, mailbox = env.run, env.mailbox
    objects = kyverno.application()
    for obj in objects:
        mailbox.create(path_of(obj, collection=True), obj)
    run.wait(lambda: mailbox.exists("/apis/kyverno.io/v1"), "the Policy CRD served in the mailbox", LOGS)
    mailbox.create(path_of(kyverno.policy(), collection=True), kyverno.policy())
    mailbox.create(CONFIGS, kyverno.edge_sync_config(CONFIG))
    run.progress.done(
        f"mailbox: a Kyverno-like application by manifests ({len(objects)} objects: CRDs, namespace, RBAC, "
        f"ServiceAccount, ConfigMaps, Services, Deployment), Policy default/{kyverno.POLICY}, and "
        f"EdgeSyncConfig {CONFIG} selecting them"
    )
    wanted = [o for o in objects if o["metadata"]["name"] != f"policyreports.{kyverno.DENATURED}"]
    wanted.append(kyverno.policy())
    for path in [path_of(o) for o in wanted]:
        run.wait(functools.partial(kcp.fetch, env.pcluster, path), f"{path} in the p-cluster", LOGS)
    run.progress.done(f"all {len(wanted)} selected objects are in the p-cluster (namespace and CRDs first)")


def _renatured(env: _Edge) -> None:
    natural = kyverno.report_crd()["metadata"]["name"]
    found = env.run.wait(
        lambda: kcp.fetch(env.pcluster, f"{CRDS}/{natural}"),
        "the renatured PolicyReport CRD",
        LOGS,
    )
    env.run.progress.done(
        f"denatured CRD policyreports.{kyverno.DENATURED} (mailbox) → {natural} in the p-cluster, "
        f"group {found['spec']['group']}"
    )


def _reported_state(env: _Edge) -> None:
    """The Deployment's and the Policy's state, reported in the p-cluster, comes back to the mailbox."""
    run = env.run
    deployment = path_of(next(o for o in kyverno.application() if o["kind"] == "Deployment"))
    ready = {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1}
    _, played = run.observed_or_played(
        lambda: (env.pcluster.get(deployment).get("status") or {}).get("readyReplicas"),
        lambda: env.pcluster.merge_patch(f"{deployment}/status", {"status": ready}),
        "the kyverno Deployment's ready replicas in the p-cluster",
        LOGS,
    )
    policy = path_of(kyverno.policy())
    env.pcluster.merge_patch(f"{policy}/status", {"status": {"ready": True}})
    run.wait(
        lambda: (env.mailbox.get(deployment).get("status") or {}).get("readyReplicas"),
        "the Deployment's state in the mailbox",
        LOGS,
    )
    run.wait(
        lambda: (env.mailbox.get(policy).get("status") or {}).get("ready"),
        "the Policy's state in the mailbox",
        LOGS,
    )
    by = "the demo played Kyverno" + (", and kube's controllers: this devcluster runs none" if played else "")
    run.progress.done(
        f"reported state returned to the mailbox: Deployment kyverno 1/1 ready, Policy ready ({by})"
    )


def _upsync(env: _Edge) -> None:
    """A report written in the p-cluster comes up by polling and is read through the export."""
    run = env.run
    reports = f"/apis/{kyverno.REPORT_GROUP}/{kyverno.REPORT_VERSION}"
    run.wait(lambda: env.pcluster.exists(reports), "PolicyReports served in the p-cluster", LOGS)
    report = kyverno.report()
    env.pcluster.create(path_of(report, collection=True), report)
    upsynced = run.wait(
        lambda: kcp.fetch(env.mailbox, path_of(report)),
        "the PolicyReport upsynced into the mailbox",
        LOGS,
    )
    run.progress.done(
        f"PolicyReport default/{kyverno.REPORT} written in the p-cluster (by the demo, as Kyverno would) → "
        f"upsynced into the mailbox, summary {upsynced['summary']}"
    )
    slice_ = run.wait(
        lambda: (
            env.wmw.get(f"/apis/apis.kcp.io/v1alpha1/apiexportendpointslices/{kyverno.EXPORT}").get("status")
            or {}
        ).get("endpoints"),
        "the export's endpoint",
        LOGS,
    )
    everywhere = JsonApi(for_url(env.wmw.api, f"{slice_[0]['url']}/clusters/*"))
    listed = everywhere.get(f"{reports}/policyreports").get("items") or []
    run.progress.done(
        f"{WMW} reads it through the {kyverno.EXPORT} export: {len(listed)} report(s) across mailboxes"
    )


def _hints(kubeconfigs: dict[str, Path]) -> list[str]:
    kubectl = launch.kubectl_command()
    mailbox, _, pcluster = kubeconfigs.values()
    return [
        "",
        "kubeconfigs:",
        *(f"  {label + ':':<34} {path}" for label, path in kubeconfigs.items()),
        "try:",
        f"  {kubectl} --kubeconfig {mailbox} get edgesyncconfigs {CONFIG} -o yaml",
        f"  {kubectl} --kubeconfig {pcluster} get all,configmaps -n {kyverno.NAMESPACE}",
        f"  {kubectl} --kubeconfig {mailbox} get policyreports -A",
        f"  {kubectl} --kubeconfig {pcluster} get crd",
        "stop with Ctrl-C",
    ]
