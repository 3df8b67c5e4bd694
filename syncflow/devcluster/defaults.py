"""kube-apiserver's defaulting of workload types: Pods, pod templates and their controllers.

The values are those of Kubernetes 1.32's ``SetDefaults_*`` functions (core/v1, apps/v1,
batch/v1) plus what the admission plugins a default cluster runs add to a new Pod
(ServiceAccount, DefaultTolerationSeconds, Priority). Defaults fill only what the client left
out, on every write, as kube defaults every decoded request.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

_NOT_READY_TOLERATIONS = [
    {
        "key": f"node.kubernetes.io/{taint}",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    }
    for taint in ("not-ready", "unreachable")
]
JOB_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"


def _container(container: Obj) -> None:
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    image = str(container.get("image") or "")
    tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else ""
    latest = "@" not in image and tag in ("", "latest")
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    resources = container.setdefault("resources", {})
    limits = resources.get("limits") or {}
    if limits:
        resources["requests"] = {**limits, **(resources.get("requests") or {})}
    for port in container.get("ports") or []:
        port.setdefault("protocol", "TCP")


def pod_spec(spec: Obj) -> None:
    """``SetDefaults_PodSpec`` and the container defaults: also what pod templates get."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            _container(container)


def qos_class(spec: Obj) -> str:
    """The Pod's QoS class from its containers' requests and limits (kube's GetPodQOS, simplified)."""
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all(
        all((r.get("limits") or {}).get(k) is not None for k in ("cpu", "memory"))
        and (r.get("requests") or {}) == {**(r.get("requests") or {}), **(r.get("limits") or {})}
        for r in resources
    )
    return "Guaranteed" if guaranteed else "Burstable"


def pod(obj: Obj, old: Obj | None) -> None:
    """A Pod's spec defaults, its admission defaults, and on create status Pending with its QoS class."""
    spec = obj.setdefault("spec", {})
    pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.setdefault("tolerations", [])
    for toleration in _NOT_READY_TOLERATIONS:
        if not any(t.get("key") == toleration["key"] for t in tolerations):
            tolerations.append(dict(toleration))
    if old is None:
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}


def _template(spec: Obj) -> None:
    template = spec.get("template")
    if isinstance(template, dict):
        pod_spec(template.setdefault("spec", {}))


def deployment(obj: Obj) -> None:
    """apps/v1 ``SetDefaults_Deployment``."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(spec)


def stateful_set(obj: Obj) -> None:
    """apps/v1 ``SetDefaults_StatefulSet``."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    _template(spec)


def daemon_set(obj: Obj) -> None:
    """apps/v1 ``SetDefaults_DaemonSet``."""
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def replica_set(obj: Obj) -> None:
    """apps/v1 ``SetDefaults_ReplicaSet`` (and the ReplicationController's, with its selector)."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    _template(spec)


def replication_controller(obj: Obj) -> None:
    """core/v1 ``SetDefaults_ReplicationController``: the selector defaults to the template's labels."""
    replica_set(obj)
    spec = obj["spec"]
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not spec.get("selector") and labels:
        spec["selector"] = dict(labels)
    if not obj["metadata"].get("labels") and labels:
        obj["metadata"]["labels"] = dict(labels)


def job(obj: Obj) -> None:
    """batch/v1 ``SetDefaults_Job`` and the selector and labels the Job strategy generates."""
    spec = obj.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    if not spec.get("manualSelector"):
        uid, name = obj["metadata"]["uid"], obj["metadata"]["name"]
        spec.setdefault("selector", {"matchLabels": {JOB_UID_LABEL: uid}})
        template_meta = spec.setdefault("template", {}).setdefault("metadata", {})
        labels = template_meta.setdefault("labels", {})
        generated = {JOB_UID_LABEL: uid, JOB_NAME_LABEL: name, "controller-uid": uid, "job-name": name}
        for key, value in generated.items():
            labels.setdefault(key, value)
    _template(spec)


def cron_job(obj: Obj) -> None:
    """batch/v1 ``SetDefaults_CronJob``."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.setdefault("jobTemplate", {})
    _template(job_template.setdefault("spec", {}))
