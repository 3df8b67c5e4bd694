"""``syncflow demo --mode clusters``: kcp and two physical clusters, one syncflow serving both.

Registers Clusters east and west with their kubeconfigs, schedules a ConfigMap to east with a label,
splits a 5-replica Deployment 3+2 over both and shows its readiness summed in kcp, then stops west
and shows its replicas moving to east. The demo plays the clusters' deployment controllers itself
(it reports the replicas of each shard ready), as the publish demo plays the service's controller.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from syncflow.api import cluster as cluster_api
from syncflow.api import crdgen
from syncflow.demo import kcp, launch
from syncflow.demo.play import DemoRun
from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.clusters.identity import CLUSTER_LABEL

WORKSPACE = "root:org:clusters"
CLUSTERS = ("east", "west")
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
LOGS = ("watch", "worker")
Obj = dict[str, Any]


_get = kcp.fetch


def shop(replicas: int) -> Obj:
    """The demo's Deployment."""
    labels = {"app": "shop"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "shop"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "shop", "image": "nginx"}]},
            },
        },
    }


@dataclass
class ClustersDemo:
    """The running stack's clients and the steps of the scenario."""

    run: DemoRun
    kcp: JsonApi
    physical: dict[str, JsonApi]
    kubeconfigs: dict[str, str]

    def wait(self, predicate: Any, what: str) -> Any:
        """Wait for ``predicate`` (a value other than None/False) with the step deadline."""
        return self.run.wait(predicate, what, LOGS)

    def ready(self, name: str) -> str | None:
        """The Cluster's Ready status and reason, e.g. ``True (Connected)`` (None before a probe)."""
        conditions = ((_get(self.kcp, f"{cluster_api.PATH}/{name}") or {}).get("status") or {}).get(
            "conditions"
        )
        ready = next((c for c in conditions or [] if c["type"] == "Ready"), None)
        return f"{ready['status']} ({ready['reason']})" if ready else None

    def register(self) -> str:
        """Create the Clusters; wait until both are Ready and take Deployments and ConfigMaps."""
        started = time.monotonic()
        for name in CLUSTERS:
            self.kcp.create(
                cluster_api.PATH,
                {
                    "apiVersion": cluster_api.API_TYPE.api_version,
                    "kind": "Cluster",
                    "metadata": {"name": name},
                    "spec": {"kubeconfig": self.kubeconfigs[name]},
                },
            )
        for name in CLUSTERS:
            self.wait(lambda n=name: self.ready(n) == "True (Connected)", f"Cluster {name} to be Ready")
        took = time.monotonic() - started
        return f"Clusters east and west registered: Ready (Connected) {took:.1f}s after creation"

    def negotiated(self) -> str:
        """Wait until both clusters take both types."""

        def accepted(name: str) -> bool:
            status = (_get(self.kcp, f"{cluster_api.PATH}/{name}") or {}).get("status") or {}
            states = [e.get("state") for e in status.get("syncedResources") or []]
            return states.count("Accepted") == 2

        for name in CLUSTERS:
            self.wait(lambda n=name: accepted(n), f"the types of {name} to be negotiated")
        export = _get(self.kcp, "/apis/apis.kcp.io/v1alpha1/apiexports/syncflow-clusters") or {}
        pulled = any(
            n.endswith(".deployments.apps") for n in export.get("spec", {}).get("latestResourceSchemas", [])
        )
        how = "pulled into kcp" if pulled else "served by kcp itself"
        return f"deployments.apps ({how}) and configmaps negotiated: Accepted on east and west"

    def schedule(self, since: float) -> str:
        """A ConfigMap labelled for east: in east only."""
        body = {
            "metadata": {"name": "greeting", "labels": {CLUSTER_LABEL: "east"}},
            "data": {"hello": "east"},
        }
        self.kcp.create(CONFIGMAPS, body)
        self.wait(lambda: _get(self.physical["east"], f"{CONFIGMAPS}/greeting"), "the ConfigMap in east")
        elsewhere = _get(self.physical["west"], f"{CONFIGMAPS}/greeting") is not None
        where = "also in west" if elsewhere else "not in west"
        took = time.monotonic() - since
        return (
            f"ConfigMap default/greeting labelled {CLUSTER_LABEL}=east: in east, {where} "
            f"({took:.1f}s from creating the Clusters to this first synced object)"
        )

    def shares(self) -> dict[str, int]:
        """The replicas of each shard of shop in kcp."""
        out = {}
        for name in CLUSTERS:
            shard = _get(self.kcp, f"{DEPLOYMENTS}/shop--{name}")
            if shard is not None:
                out[name] = int(shard["spec"]["replicas"])
        return out

    def split(self) -> str:
        """A 5-replica Deployment split over east and west; the demo reports the replicas ready."""
        self.kcp.create(DEPLOYMENTS, shop(5))
        self.wait(lambda: self.shares() == {"east": 3, "west": 2}, "shop to be split 3+2")
        for name in CLUSTERS:
            path = f"{DEPLOYMENTS}/shop--{name}"
            copy = self.wait(lambda n=name, p=path: _get(self.physical[n], p), f"shop--{name} in {name}")
            self._report_ready(name, path, int(copy["spec"]["replicas"]))
        self.wait(
            lambda: (
                ((_get(self.kcp, f"{DEPLOYMENTS}/shop") or {}).get("status") or {}).get("readyReplicas") == 5
            ),
            "the root's status to sum 5 ready replicas",
        )
        return "Deployment default/shop (5 replicas) split: shop--east 3, shop--west 2; root status 5/5 ready"

    def _report_ready(self, cluster: str, path: str, replicas: int) -> None:
        counts = {k: replicas for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")}
        self.physical[cluster].merge_patch(f"{path}/status", {"status": counts})

    def lose_west(self) -> str:
        """Stop west's API server: it turns NotReady and its replicas move to east."""
        stopped = time.monotonic()
        self.run.stack.stop_child("west")
        self.wait(lambda: self.ready("west") == "False (Unreachable)", "west to turn NotReady")
        not_ready = time.monotonic() - stopped
        self.wait(lambda: self.shares() == {"east": 5, "west": 0}, "shop's replicas to move to east")
        return (
            f"west stopped: Ready=False (Unreachable) after {not_ready:.1f}s; shop--east 5, shop--west 0 "
            f"{time.monotonic() - stopped:.1f}s after the stop"
        )


def scenario(run: DemoRun) -> list[str]:
    """Start kcp, the physical clusters and ``syncflow clusters``; play the steps; return the hints."""
    progress, stack = run.progress, run.stack
    kcp_dc, east_dc, root = kcp.start_clusters(run, "east", "physical cluster east")
    west_dc = launch.start_devcluster(stack, "west", kcp=False)
    progress.done(f"physical cluster west devcluster serving at {west_dc.url}")
    workspace = kcp.create_workspaces(root, WORKSPACE)
    kcp.install(workspace, [crdgen.crd(cluster_api.API_TYPE)], run.timeout)
    progress.done(f"kcp: workspace {WORKSPACE} with the Cluster CRD")
    launch.start_roles(
        stack,
        "clusters",
        {
            "SYNCFLOW_REDIS_URL": run.redis_url,
            "SYNCFLOW_AGENT_NAME": run.agent,
            "SYNCFLOW_KCP_KUBECONFIG": str(kcp_dc.kubeconfig),
            "SYNCFLOW_WORKSPACE_CLUSTER": WORKSPACE,
            "SYNCFLOW_CLUSTER_RESOURCES": '["deployments.apps", "configmaps"]',
            "SYNCFLOW_PROBE_PERIOD": "2",
            "SYNCFLOW_BACKOFF_CAP": "2",
        },
        run.metrics,
    )
    progress.done("syncflow clusters running: watch, worker and beat")
    physical = {"east": east_dc, "west": west_dc}
    demo = ClustersDemo(
        run,
        workspace,
        {name: JsonApi(load_client(str(d.kubeconfig))) for name, d in physical.items()},
        {name: d.kubeconfig.read_text() for name, d in physical.items()},
    )
    since = time.monotonic()
    for step in (demo.register, demo.negotiated, lambda: demo.schedule(since), demo.split, demo.lose_west):
        progress.done(step())
    workspace_kubeconfig = launch.workspace_kubeconfig(
        kcp_dc.kubeconfig, stack.workdir / "kcp-clusters.kubeconfig", f"{kcp_dc.url}/clusters/{WORKSPACE}"
    )
    return [
        "",
        f"kcp workspace {WORKSPACE}: {workspace_kubeconfig}",
        f"cluster east: {east_dc.kubeconfig}",
        "try:",
        f"  kubectl --kubeconfig {workspace_kubeconfig} get clusters",
        f"  kubectl --kubeconfig {workspace_kubeconfig} get deployments --show-labels",
        f"  kubectl --kubeconfig {workspace_kubeconfig} label cm greeting {CLUSTER_LABEL}=west --overwrite",
        f"  kubectl --kubeconfig {east_dc.kubeconfig} get configmaps,deployments",
        "stop with Ctrl-C",
    ]
