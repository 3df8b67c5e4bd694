"""ReplicaSet controller: keeps ``spec.replicas`` pods from the template, and the status counts."""

from __future__ import annotations

from syncflow.devcluster.simulate.config import SimulationConfig
from syncflow.devcluster.simulate.pods import count, is_active, is_ready, pod_from_template, without_zeros
from syncflow.devcluster.simulate.workloads import WorkloadController, controlled_pods
from syncflow.devcluster.store import Obj


def desired_replicas(obj: Obj, config: SimulationConfig) -> int:
    """``spec.replicas`` (default 1), capped at the simulation's ``max_replicas``."""
    replicas = (obj.get("spec") or {}).get("replicas")
    return min(1 if replicas is None else int(replicas), config.max_replicas)


class ReplicaSets(WorkloadController):
    """One reconcile creates or deletes at most ``writes_per_pass`` pods, else writes the status."""

    group, plural = "apps", "replicasets"

    def reconcile(self, cluster: str, namespace: str, name: str) -> None:
        """Bring one ReplicaSet's pods and status in line with its spec."""
        rs = self.live(cluster, namespace, name)
        if rs is None:
            return
        pods = controlled_pods(self.api, self.index, cluster, rs)
        active = [p for p in pods if is_active(p)]
        missing = desired_replicas(rs, self.config) - len(active)
        if missing > 0:
            template = rs["spec"].get("template") or {}
            for _ in range(min(missing, self.config.writes_per_pass)):
                self.api.create(cluster, "", "pods", namespace, pod_from_template(rs, template, {}))
            return
        if missing < 0:
            # Like kube: not-ready pods go first, then the newest.
            newest_first = sorted(active, key=lambda p: str(p["metadata"]["creationTimestamp"]), reverse=True)
            victims = sorted(newest_first, key=is_ready)
            for pod in victims[: min(-missing, self.config.writes_per_pass)]:
                self.api.delete(cluster, "", "pods", pod)
            return
        counts = count(pods)
        status = {
            **without_zeros(
                {
                    "replicas": counts.active,
                    "fullyLabeledReplicas": counts.active,
                    "readyReplicas": counts.ready,
                    "availableReplicas": counts.ready,
                }
            ),
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        self.api.replace(cluster, "apps", "replicasets", rs, {**rs, "status": status}, "status")
