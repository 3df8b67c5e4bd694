"""StatefulSet controller: pods ``<name>-0`` … ``<name>-N-1``, ordered, and the status counts.

``OrderedReady`` (the default) creates one pod at a time, each once the lower ordinals are Ready,
and removes the highest ordinal first; ``Parallel`` creates and removes without waiting. A new
template rolls out by deleting the highest pod of the old revision once every other pod is Ready
(the pod is then created again from the new template). No ControllerRevisions and no
PersistentVolumeClaims from ``volumeClaimTemplates`` are made.
"""

from __future__ import annotations

from syncflow.devcluster.simulate.pods import (
    is_active,
    is_ready,
    pod_from_template,
    template_hash,
    without_zeros,
)
from syncflow.devcluster.simulate.replicasets import desired_replicas
from syncflow.devcluster.simulate.workloads import WorkloadController, controlled_pods
from syncflow.devcluster.store import Obj

REVISION_LABEL = "controller-revision-hash"


def _ordinal(sts_name: str, pod: Obj) -> int:
    suffix = pod["metadata"]["name"][len(sts_name) + 1 :]
    return int(suffix) if suffix.isdigit() else -1


class StatefulSets(WorkloadController):
    """One reconcile makes at most ``writes_per_pass`` pod writes, else writes the status."""

    group, plural = "apps", "statefulsets"

    def reconcile(self, cluster: str, namespace: str, name: str) -> None:
        """Bring one StatefulSet's pods and status in line with its spec."""
        sts = self.live(cluster, namespace, name)
        if sts is None:
            return
        spec = sts.get("spec") or {}
        replicas = desired_replicas(sts, self.config)
        revision = f"{name}-{template_hash(spec.get('template') or {})}"
        parallel = spec.get("podManagementPolicy") == "Parallel"
        pods = {_ordinal(name, p): p for p in controlled_pods(self.api, self.index, cluster, sts)}
        active = {i: p for i, p in pods.items() if is_active(p)}
        if self._scale(cluster, sts, replicas, revision, parallel, pods, active):
            return
        stale = [
            i
            for i, p in active.items()
            if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision
        ]
        if stale and all(is_ready(p) for p in active.values()) and len(active) == replicas:
            self.api.delete(cluster, "", "pods", active[max(stale)])
            return
        updated = len(active) - len(stale)
        ready = sum(1 for p in active.values() if is_ready(p))
        old_status = sts.get("status") or {}
        status = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            **without_zeros(
                {
                    "replicas": len(active),
                    "readyReplicas": ready,
                    "currentReplicas": len(active) if not stale else len(stale),
                    "updatedReplicas": updated,
                    "availableReplicas": ready,
                }
            ),
            "currentRevision": revision if not stale else old_status.get("currentRevision", revision),
            "updateRevision": revision,
            "collisionCount": 0,
        }
        self.api.replace(cluster, "apps", "statefulsets", sts, {**sts, "status": status}, "status")

    def _scale(
        self,
        cluster: str,
        sts: Obj,
        replicas: int,
        revision: str,
        parallel: bool,
        pods: dict[int, Obj],
        active: dict[int, Obj],
    ) -> bool:
        """Create missing ordinals or delete surplus ones; True if anything was written."""
        name, namespace = sts["metadata"]["name"], sts["metadata"]["namespace"]
        budget = self.config.writes_per_pass
        wrote = False
        for i in range(replicas):
            if budget == 0:
                break
            if i in pods:
                if not parallel and not is_ready(pods[i]):
                    break
                continue
            pod = pod_from_template(
                sts,
                sts["spec"].get("template") or {},
                {
                    "statefulset.kubernetes.io/pod-name": f"{name}-{i}",
                    "apps.kubernetes.io/pod-index": str(i),
                    REVISION_LABEL: revision,
                },
                name=f"{name}-{i}",
            )
            pod["spec"]["hostname"] = f"{name}-{i}"
            if sts["spec"].get("serviceName"):
                pod["spec"]["subdomain"] = sts["spec"]["serviceName"]
            self.api.create(cluster, "", "pods", namespace, pod)
            wrote, budget = True, budget - 1
            if not parallel:
                return True
        surplus = sorted((i for i in active if i >= replicas or i < 0), reverse=True)
        for i in surplus[: 1 if not parallel else budget]:
            self.api.delete(cluster, "", "pods", active[i])
            wrote = True
        return wrote
