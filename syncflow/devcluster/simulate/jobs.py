"""Job controller: runs ``parallelism`` pods at a time until ``completions`` have succeeded.

Pods of a Job succeed as soon as they run (see :mod:`kubelet`). ``completions`` unset counts as 1;
no failures, retries, ``backoffLimit``, ``activeDeadlineSeconds``, indexed completion or
``ttlSecondsAfterFinished``.
"""

from __future__ import annotations

from syncflow.devcluster.crud import now_rfc3339
from syncflow.devcluster.simulate.conditions import is_true, set_condition
from syncflow.devcluster.simulate.pods import count, pod_from_template
from syncflow.devcluster.simulate.workloads import WorkloadController, controlled_pods
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy

_DONE_MESSAGE = "Reached expected number of succeeded pods"


def _finished(job: Obj) -> bool:
    return is_true(job, "Complete") or is_true(job, "Failed")


class Jobs(WorkloadController):
    """One reconcile creates at most ``writes_per_pass`` pods, else writes the status."""

    group, plural = "batch", "jobs"

    def reconcile(self, cluster: str, namespace: str, name: str) -> None:
        """Bring one Job's pods and status in line with its spec."""
        job = self.live(cluster, namespace, name)
        if job is None or _finished(job):
            return
        spec = job.get("spec") or {}
        completions = min(int(spec.get("completions") or 1), self.config.max_replicas)
        parallelism = min(int(spec.get("parallelism", 1)), self.config.max_replicas)
        counts = count(controlled_pods(self.api, self.index, cluster, job))
        start = min(parallelism, completions - counts.succeeded) - counts.active
        if start > 0 and not spec.get("suspend"):
            labels = {
                "batch.kubernetes.io/controller-uid": job["metadata"]["uid"],
                "batch.kubernetes.io/job-name": name,
                "controller-uid": job["metadata"]["uid"],
                "job-name": name,
            }
            for _ in range(min(start, self.config.writes_per_pass)):
                self.api.create(
                    cluster, "", "pods", namespace, pod_from_template(job, spec.get("template") or {}, labels)
                )
            return
        old = job.get("status") or {}
        status: Obj = {
            "startTime": old.get("startTime") or now_rfc3339(),
            "active": counts.active,
            "ready": counts.ready,
            "succeeded": counts.succeeded,
            "uncountedTerminatedPods": {},
        }
        status = {k: v for k, v in status.items() if v != 0 or k == "ready"}
        if counts.failed:
            status["failed"] = counts.failed
        conditions: list[Obj] = deep_copy(old.get("conditions") or [])
        if counts.succeeded >= completions and counts.active == 0:
            for kind in ("SuccessCriteriaMet", "Complete"):
                conditions = set_condition(conditions, kind, "True", "CompletionsReached", _DONE_MESSAGE)
            for c in conditions:
                c["lastProbeTime"] = c["lastTransitionTime"]
            status["completionTime"] = now_rfc3339()
        if conditions:
            status["conditions"] = conditions
        self.api.replace(cluster, "batch", "jobs", job, {**job, "status": status}, "status")
