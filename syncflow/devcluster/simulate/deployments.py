"""Deployment controller: a ReplicaSet per pod template, rollouts, and the Deployment's status.

Simplified RollingUpdate: a new template gets a new ReplicaSet scaled to the full replica count
at once; the old ReplicaSets are scaled to 0 once the new one has all its replicas available
(maxSurge is effectively 100%). Recreate scales the old ones to 0 first and the new one up once
their pods are gone. Old ReplicaSets are kept at 0 replicas (``revisionHistoryLimit`` is not
enforced); ``paused`` and ``progressDeadlineSeconds`` are ignored.
"""

from __future__ import annotations

from syncflow.devcluster.simulate.conditions import set_condition
from syncflow.devcluster.simulate.owners import owner_reference
from syncflow.devcluster.simulate.pods import template_hash, without_zeros
from syncflow.devcluster.simulate.replicasets import desired_replicas
from syncflow.devcluster.simulate.workloads import WorkloadController, controlled
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"


def _status_count(obj: Obj, field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


def _revision(rs: Obj) -> int:
    return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0") or 0)


def max_unavailable(deployment: Obj, replicas: int) -> int:
    """``strategy.rollingUpdate.maxUnavailable`` as a count (default 25%, rounded down)."""
    strategy = (deployment.get("spec") or {}).get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return replicas
    value = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", "25%")
    if isinstance(value, str) and value.endswith("%"):
        return replicas * int(value[:-1]) // 100
    return int(value)


class Deployments(WorkloadController):
    """One reconcile makes at most one ReplicaSet write, or writes the status."""

    group, plural = "apps", "deployments"

    def reconcile(self, cluster: str, namespace: str, name: str) -> None:
        """Bring one Deployment's ReplicaSets and status in line with its spec."""
        deployment = self.live(cluster, namespace, name)
        if deployment is None:
            return
        spec = deployment.get("spec") or {}
        replicas = desired_replicas(deployment, self.config)
        template = spec.get("template") or {}
        pod_hash = template_hash(template)
        owned = controlled(self.api, self.index, cluster, deployment, "apps", "replicasets")
        new = next(
            (rs for rs in owned if (rs["metadata"].get("labels") or {}).get(HASH_LABEL) == pod_hash), None
        )
        old = [rs for rs in owned if rs is not new]
        recreate = (spec.get("strategy") or {}).get("type") == "Recreate"
        old_running = [
            rs for rs in old if (rs["spec"].get("replicas") or 0) > 0 or _status_count(rs, "replicas")
        ]
        if recreate and old_running and self._scale_down(cluster, old_running):
            return
        target = 0 if recreate and old_running else replicas
        if new is None:
            revision = max((_revision(rs) for rs in owned), default=0) + 1
            self._create(cluster, deployment, template, pod_hash, target, revision)
            return
        if self._scale(cluster, new, target):
            return
        rolled = not recreate and _status_count(new, "availableReplicas") >= replicas
        if rolled and old_running and self._scale_down(cluster, old_running):
            return
        self._write_status(cluster, deployment, owned, new, replicas)

    def _create(
        self, cluster: str, deployment: Obj, template: Obj, pod_hash: str, replicas: int, revision: int
    ) -> None:
        spec = deployment["spec"]
        rs_template = deep_copy(template)
        rs_template.setdefault("metadata", {})
        rs_template["metadata"]["labels"] = {
            **(rs_template["metadata"].get("labels") or {}),
            HASH_LABEL: pod_hash,
        }
        selector = deep_copy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        body: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{deployment['metadata']['name']}-{pod_hash}",
                "labels": rs_template["metadata"]["labels"],
                "annotations": {
                    REVISION: str(revision),
                    "deployment.kubernetes.io/desired-replicas": str(replicas),
                },
                "ownerReferences": [owner_reference(deployment)],
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": spec.get("minReadySeconds", 0),
                "selector": selector,
                "template": rs_template,
            },
        }
        self.api.create(cluster, "apps", "replicasets", deployment["metadata"]["namespace"], body)

    def _scale(self, cluster: str, rs: Obj, replicas: int) -> bool:
        """Set a ReplicaSet's replicas; True if that was a write."""
        if rs["spec"].get("replicas") == replicas:
            return False
        scaled = deep_copy(rs)
        scaled["spec"]["replicas"] = replicas
        return self.api.replace(cluster, "apps", "replicasets", rs, scaled) is not None

    def _scale_down(self, cluster: str, replica_sets: list[Obj]) -> bool:
        """Scale the first ReplicaSet not yet at 0 to 0; True if that was a write."""
        running = next((rs for rs in replica_sets if rs["spec"].get("replicas")), None)
        return running is not None and self._scale(cluster, running, 0)

    def _write_status(self, cluster: str, deployment: Obj, owned: list[Obj], new: Obj, replicas: int) -> None:
        total = sum(_status_count(rs, "replicas") for rs in owned)
        available = sum(_status_count(rs, "availableReplicas") for rs in owned)
        updated = _status_count(new, "replicas")
        conditions: list[Obj] = deep_copy((deployment.get("status") or {}).get("conditions") or [])
        if available >= replicas - max_unavailable(deployment, replicas):
            conditions = set_condition(
                conditions,
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                update_time=True,
            )
        else:
            conditions = set_condition(
                conditions,
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                update_time=True,
            )
        new_name = new["metadata"]["name"]
        if updated == replicas and total == replicas and available == replicas:
            reason, message = (
                "NewReplicaSetAvailable",
                f'ReplicaSet "{new_name}" has successfully progressed.',
            )
        else:
            reason, message = "ReplicaSetUpdated", f'ReplicaSet "{new_name}" is progressing.'
        conditions = set_condition(conditions, "Progressing", "True", reason, message, update_time=True)
        status = {
            "observedGeneration": deployment["metadata"].get("generation", 1),
            **without_zeros(
                {
                    "replicas": total,
                    "updatedReplicas": updated,
                    "readyReplicas": sum(_status_count(rs, "readyReplicas") for rs in owned),
                    "availableReplicas": available,
                    "unavailableReplicas": max(
                        sum(int(rs["spec"].get("replicas") or 0) for rs in owned) - available, 0
                    ),
                }
            ),
            "conditions": conditions,
        }
        self.api.replace(
            cluster, "apps", "deployments", deployment, {**deployment, "status": status}, "status"
        )
