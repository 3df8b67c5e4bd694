"""DaemonSet controller: one pod on every Ready node the template's ``nodeSelector`` admits.

A new template replaces one pod at a time (RollingUpdate with maxUnavailable 1). Taints,
tolerations and node affinity are not considered; pods are bound with ``spec.nodeName``.
"""

from __future__ import annotations

from syncflow.devcluster.simulate.nodes import ready_nodes
from syncflow.devcluster.simulate.pods import (
    count,
    is_active,
    is_ready,
    pod_from_template,
    template_hash,
    without_zeros,
)
from syncflow.devcluster.simulate.workloads import WorkloadController, controlled_pods
from syncflow.util.jsonvalues import deep_copy

REVISION_LABEL = "controller-revision-hash"


class DaemonSets(WorkloadController):
    """One reconcile makes at most ``writes_per_pass`` pod writes, else writes the status."""

    group, plural = "apps", "daemonsets"

    def reconcile(self, cluster: str, namespace: str, name: str) -> None:
        """Bring one DaemonSet's pods and status in line with its spec and the nodes."""
        ds = self.live(cluster, namespace, name)
        if ds is None:
            return
        template = (ds.get("spec") or {}).get("template") or {}
        revision = template_hash(template)
        nodes = ready_nodes(self.api, cluster, (template.get("spec") or {}).get("nodeSelector") or {})
        pods = [p for p in controlled_pods(self.api, self.index, cluster, ds) if is_active(p)]
        on_node = {str(p["spec"].get("nodeName", "")): p for p in pods}
        misplaced = [p for p in pods if p["spec"].get("nodeName") not in nodes]
        missing = [n for n in nodes if n not in on_node]
        budget = self.config.writes_per_pass
        for pod in misplaced[:budget]:
            self.api.delete(cluster, "", "pods", pod)
        for node in missing[: max(budget - len(misplaced), 0)]:
            pod = pod_from_template(ds, template, {REVISION_LABEL: revision})
            pod["spec"]["nodeName"] = node
            self.api.create(cluster, "", "pods", namespace, pod)
        if misplaced or missing:
            return
        stale = [p for p in pods if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision]
        if stale and all(is_ready(p) for p in pods):
            self.api.delete(cluster, "", "pods", stale[0])
            return
        counts = count(pods)
        status = {
            "observedGeneration": ds["metadata"].get("generation", 1),
            "currentNumberScheduled": len(pods),
            "desiredNumberScheduled": len(nodes),
            "numberMisscheduled": 0,
            "numberReady": counts.ready,
            **without_zeros(
                {
                    "updatedNumberScheduled": len(pods) - len(stale),
                    "numberAvailable": counts.ready,
                    "numberUnavailable": len(nodes) - counts.ready,
                }
            ),
        }
        self.api.replace(cluster, "apps", "daemonsets", ds, {**deep_copy(ds), "status": status}, "status")
