"""kube-apiserver's table printers for built-in resources: the columns ``kubectl get`` shows.

Column names, order, types, wide-only columns (priority 1, shown with ``-o wide``) and cell formats
follow Kubernetes 1.32's ``pkg/printers/internalversion``. As in kube, the server always fills the
wide columns and kubectl hides them unless asked.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

Obj = dict[str, Any]
Cell = Callable[[Obj], Any]
Column = tuple[dict[str, Any], Cell]

NONE = "<none>"


def col(name: str, kind: str = "string", fmt: str = "", priority: int = 0) -> dict[str, Any]:
    """A ``TableColumnDefinition``."""
    return {"name": name, "type": kind, "format": fmt, "description": name, "priority": priority}


def _parse_time(timestamp: str) -> datetime | None:
    """An RFC 3339 time, with or without fractional seconds (status timestamps often have them)."""
    try:
        parsed = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def human_duration(seconds: float) -> str:
    """A duration as kube's ``duration.HumanDuration`` prints it: ``45s``, ``3m12s``, ``5h30m``, ``3d4h``."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        return f"{minutes}m{whole % 60}s" if whole % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    if hours < 24 * 365 * 8:
        return f"{days // 365}y{days % 365}d" if days % 365 else f"{days // 365}y"
    return f"{days // 365}y"


def human_age(timestamp: str | None, now: datetime | None = None) -> str:
    """Time since ``timestamp`` as kube prints ages: ``<unknown>`` if unset, ``<invalid>`` if not RFC 3339."""
    if not timestamp:
        return "<unknown>"
    since = _parse_time(timestamp)
    if since is None:
        return "<invalid>"
    return human_duration(((now or datetime.now(UTC)) - since).total_seconds())


def _at(obj: Any, *path: str) -> Any:
    """The value at ``path`` in nested dicts, or None."""
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _int(obj: Obj, *path: str) -> int:
    value = _at(obj, *path)
    return value if isinstance(value, int) else 0


def _list(obj: Obj, *path: str) -> list[Any]:
    value = _at(obj, *path)
    return value if isinstance(value, list) else []


def format_labels(labels: Any) -> str:
    """``labels.FormatLabels``: ``a=b,c=d`` sorted by key; ``<none>`` when empty."""
    if not isinstance(labels, dict) or not labels:
        return NONE
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


def format_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: requirements sorted by key (``k=v``, ``k in (a,b)``, ``k``, ``!k``)."""
    if not isinstance(selector, dict):
        return NONE
    requirements = [(key, f"{key}={value}") for key, value in (selector.get("matchLabels") or {}).items()]
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key", ""), expression.get("operator", "")
        values = ",".join(sorted(expression.get("values") or []))
        shown = {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key}
        requirements.append((key, shown.get(operator, f"!{key}")))
    return ",".join(text for _, text in sorted(requirements, key=lambda r: r[0])) or NONE


# ----- columns shared by many kinds -----

NAME: Column = (col("Name", fmt="name"), lambda o: o["metadata"]["name"])
AGE: Column = (col("Age", "date"), lambda o: human_age(o["metadata"].get("creationTimestamp")))


def _template_columns(pod_spec: Callable[[Obj], Any], selector: Callable[[Obj], Any] | None) -> list[Column]:
    """The wide ``Containers`` and ``Images`` columns of a pod template, and ``Selector`` if given."""

    def containers(o: Obj) -> list[Obj]:
        return [c for c in _list(pod_spec(o) or {}, "containers") if isinstance(c, dict)]

    columns: list[Column] = [
        (col("Containers", priority=1), lambda o: ",".join(str(c.get("name", "")) for c in containers(o))),
        (col("Images", priority=1), lambda o: ",".join(str(c.get("image", "")) for c in containers(o))),
    ]
    if selector is not None:
        columns.append((col("Selector", priority=1), lambda o: format_selector(selector(o))))
    return columns


def _workload_template(o: Obj) -> Any:
    return _at(o, "spec", "template", "spec")


def _spec_selector(o: Obj) -> Any:
    return _at(o, "spec", "selector")


_WORKLOAD_WIDE = _template_columns(_workload_template, _spec_selector)


def _integer(name: str, *path: str) -> Column:
    return (col(name, "integer"), lambda o: _int(o, *path))


# ----- pods -----


def _terminated_reason(state: Obj, prefix: str = "") -> str:
    terminated = state.get("terminated") or {}
    if terminated.get("reason"):
        return f"{prefix}{terminated['reason']}"
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode', 0)}"


def _condition_true(obj: Obj, kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in _list(obj, "status", "conditions")
    )


def _pod_summary(pod: Obj) -> tuple[str, str, str]:
    """The Ready, Status and Restarts cells: kube's ``printPod`` (restartable init containers included)."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    init_specs = {c.get("name"): c for c in _list(spec, "initContainers")}
    sidecars = {name for name, c in init_specs.items() if c.get("restartPolicy") == "Always"}
    total, ready, restarts, sidecar_restarts = len(_list(spec, "containers")) + len(sidecars), 0, 0, 0
    last_restart, sidecar_last_restart = "", ""
    reason = status.get("reason") or status.get("phase") or ""
    if any(
        c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
        for c in _list(status, "conditions")
    ):
        reason = "SchedulingGated"
    initializing = False
    init_statuses = _list(status, "initContainerStatuses")
    for index, container in enumerate(init_statuses):
        state, finished = (
            container.get("state") or {},
            _at(container, "lastState", "terminated", "finishedAt") or "",
        )
        restarts += container.get("restartCount", 0)
        last_restart = max(last_restart, finished)
        if container.get("name") in sidecars:
            sidecar_restarts += container.get("restartCount", 0)
            sidecar_last_restart = max(sidecar_last_restart, finished)
        terminated = state.get("terminated")
        waiting = (state.get("waiting") or {}).get("reason", "")
        if terminated is not None and terminated.get("exitCode", 0) == 0:
            continue
        if container.get("name") in sidecars and container.get("started"):
            ready += 1 if container.get("ready") else 0
            continue
        if terminated is not None:
            reason = _terminated_reason(state, "Init:")
        elif waiting and waiting != "PodInitializing":
            reason = "Init:" + waiting
        else:
            reason = f"Init:{index}/{len(init_specs)}"
        initializing = True
        break
    if not initializing or _condition_true(pod, "Initialized"):
        restarts, last_restart, running = sidecar_restarts, sidecar_last_restart, False
        for container in reversed(_list(status, "containerStatuses")):
            state = container.get("state") or {}
            restarts += container.get("restartCount", 0)
            last_restart = max(last_restart, _at(container, "lastState", "terminated", "finishedAt") or "")
            if (state.get("waiting") or {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif state.get("terminated") is not None:
                reason = _terminated_reason(state)
            elif container.get("ready") and state.get("running") is not None:
                running, ready = True, ready + 1
        if reason == "Completed" and running:
            reason = "Running" if _condition_true(pod, "Ready") else "NotReady"
    if pod["metadata"].get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif status.get("phase") not in ("Succeeded", "Failed"):
            reason = "Terminating"
    shown_restarts = str(restarts)
    if restarts and last_restart:
        shown_restarts = f"{restarts} ({human_age(last_restart)} ago)"
    return f"{ready}/{total}", reason, shown_restarts


def _readiness_gates(pod: Obj) -> str:
    gates = _list(pod, "spec", "readinessGates")
    if not gates:
        return NONE
    conditions = {c.get("type"): c.get("status") for c in _list(pod, "status", "conditions")}
    passed = sum(1 for gate in gates if conditions.get(gate.get("conditionType")) == "True")
    return f"{passed}/{len(gates)}"


def _pod_ip(pod: Obj) -> str:
    ips = _list(pod, "status", "podIPs")
    return (ips[0].get("ip") if ips and isinstance(ips[0], dict) else "") or NONE


_POD_COLUMNS: list[Column] = [
    NAME,
    (col("Ready"), lambda o: _pod_summary(o)[0]),
    (col("Status"), lambda o: _pod_summary(o)[1]),
    (col("Restarts"), lambda o: _pod_summary(o)[2]),
    AGE,
    (col("IP", priority=1), _pod_ip),
    (col("Node", priority=1), lambda o: _at(o, "spec", "nodeName") or NONE),
    (col("Nominated Node", priority=1), lambda o: _at(o, "status", "nominatedNodeName") or NONE),
    (col("Readiness Gates", priority=1), _readiness_gates),
]


def row_conditions(group: str, plural: str, obj: Obj) -> list[Obj]:
    """A row's ``conditions``: kube marks the rows of finished pods ``Completed``."""
    phase = _at(obj, "status", "phase")
    if (group, plural) != ("", "pods") or phase not in ("Succeeded", "Failed"):
        return []
    message = "The pod has completed successfully." if phase == "Succeeded" else "The pod failed."
    return [{"type": "Completed", "status": "True", "reason": phase, "message": message}]


# ----- nodes -----


def _node_status(node: Obj) -> str:
    ready = next((c for c in _list(node, "status", "conditions") if c.get("type") == "Ready"), None)
    shown = ["Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"]
    if _at(node, "spec", "unschedulable"):
        shown.append("SchedulingDisabled")
    return ",".join(shown)


def _node_roles(node: Obj) -> str:
    roles = set()
    for key, value in (node["metadata"].get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key.partition("/")[2]:
            roles.add(key.partition("/")[2])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or NONE


def _node_address(kind: str) -> Cell:
    def cell(node: Obj) -> str:
        found = (a.get("address") for a in _list(node, "status", "addresses") if a.get("type") == kind)
        return next(found, None) or NONE

    return cell


def _node_info(field: str) -> Cell:
    return lambda node: _at(node, "status", "nodeInfo", field) or "<unknown>"


_NODE_COLUMNS: list[Column] = [
    NAME,
    (col("Status"), _node_status),
    (col("Roles"), _node_roles),
    AGE,
    (col("Version"), lambda o: _at(o, "status", "nodeInfo", "kubeletVersion") or ""),
    (col("Internal-IP", priority=1), _node_address("InternalIP")),
    (col("External-IP", priority=1), _node_address("ExternalIP")),
    (col("OS-Image", priority=1), _node_info("osImage")),
    (col("Kernel-Version", priority=1), _node_info("kernelVersion")),
    (col("Container-Runtime", priority=1), _node_info("containerRuntimeVersion")),
]

# ----- jobs and cronjobs -----


def _job_status(job: Obj) -> str:
    for kind, shown in (("Complete", "Complete"), ("Failed", "Failed")):
        if _condition_true(job, kind):
            return shown
    if job["metadata"].get("deletionTimestamp"):
        return "Terminating"
    for kind in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _condition_true(job, kind):
            return kind
    return "Running"


def _job_completions(job: Obj) -> str:
    succeeded, completions, parallelism = (
        _int(job, "status", "succeeded"),
        _at(job, "spec", "completions"),
        _at(job, "spec", "parallelism"),
    )
    if completions is not None:
        return f"{succeeded}/{completions}"
    if parallelism is None:
        return f"{succeeded}/1 of 1"
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _job_duration(job: Obj) -> str:
    start = _parse_time(_at(job, "status", "startTime") or "")
    if start is None:
        return ""
    end = _parse_time(_at(job, "status", "completionTime") or "") or datetime.now(UTC)
    return human_duration((end - start).total_seconds())


_JOB_COLUMNS: list[Column] = [
    NAME,
    (col("Status"), _job_status),
    (col("Completions"), _job_completions),
    (col("Duration"), _job_duration),
    AGE,
    *_WORKLOAD_WIDE,
]

_CRONJOB_COLUMNS: list[Column] = [
    NAME,
    (col("Schedule"), lambda o: _at(o, "spec", "schedule") or ""),
    (col("Timezone"), lambda o: _at(o, "spec", "timeZone") or NONE),
    (
        col("Suspend", "boolean"),
        lambda o: {True: "True", False: "False"}.get(_at(o, "spec", "suspend"), "<unset>"),
    ),
    (col("Active", "integer"), lambda o: len(_list(o, "status", "active"))),
    (
        col("Last Schedule"),
        lambda o: human_age(t) if (t := _at(o, "status", "lastScheduleTime")) else NONE,
    ),
    AGE,
    *_template_columns(
        lambda o: _at(o, "spec", "jobTemplate", "spec", "template", "spec"),
        lambda o: _at(o, "spec", "jobTemplate", "spec", "selector"),
    ),
]

# ----- services -----


def _service_external_ip(service: Obj) -> str:
    kind = _at(service, "spec", "type") or "ClusterIP"
    external = [str(ip) for ip in _list(service, "spec", "externalIPs")]
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or NONE
    if kind == "LoadBalancer":
        ingress = _list(service, "status", "loadBalancer", "ingress")
        balanced = [i.get("ip") or i.get("hostname") for i in ingress if i.get("ip") or i.get("hostname")]
        return ",".join([*balanced, *external]) or "<pending>"
    if kind == "ExternalName":
        return str(_at(service, "spec", "externalName") or "")
    return "<unknown>"


def _service_ports(service: Obj) -> str:
    shown = []
    for port in _list(service, "spec", "ports"):
        node_port = f":{port['nodePort']}" if port.get("nodePort") else ""
        shown.append(f"{port.get('port')}{node_port}/{port.get('protocol', 'TCP')}")
    return ",".join(shown) or NONE


_SERVICE_COLUMNS: list[Column] = [
    NAME,
    (col("Type"), lambda o: _at(o, "spec", "type") or ""),
    (col("Cluster-IP"), lambda o: (_list(o, "spec", "clusterIPs") or [NONE])[0]),
    (col("External-IP"), _service_external_ip),
    (col("Port(s)"), _service_ports),
    AGE,
    (col("Selector", priority=1), lambda o: format_labels(_at(o, "spec", "selector"))),
]

BUILTIN_COLUMNS: dict[tuple[str, str], list[Column]] = {
    ("", "namespaces"): [NAME, (col("Status"), lambda o: _at(o, "status", "phase") or ""), AGE],
    ("", "configmaps"): [
        NAME,
        (col("Data", "integer"), lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {})),
        AGE,
    ],
    ("", "secrets"): [
        NAME,
        (col("Type"), lambda o: o.get("type", "")),
        (col("Data", "integer"), lambda o: len(o.get("data") or {})),
        AGE,
    ],
    ("", "pods"): _POD_COLUMNS,
    ("", "nodes"): _NODE_COLUMNS,
    ("", "services"): _SERVICE_COLUMNS,
    ("apps", "deployments"): [
        NAME,
        (col("Ready"), lambda o: f"{_int(o, 'status', 'readyReplicas')}/{_int(o, 'spec', 'replicas')}"),
        _integer("Up-to-date", "status", "updatedReplicas"),
        _integer("Available", "status", "availableReplicas"),
        AGE,
        *_WORKLOAD_WIDE,
    ],
    ("apps", "replicasets"): [
        NAME,
        _integer("Desired", "spec", "replicas"),
        _integer("Current", "status", "replicas"),
        _integer("Ready", "status", "readyReplicas"),
        AGE,
        *_WORKLOAD_WIDE,
    ],
    ("apps", "statefulsets"): [
        NAME,
        (col("Ready"), lambda o: f"{_int(o, 'status', 'readyReplicas')}/{_int(o, 'spec', 'replicas')}"),
        AGE,
        *_template_columns(_workload_template, None),
    ],
    ("apps", "daemonsets"): [
        NAME,
        _integer("Desired", "status", "desiredNumberScheduled"),
        _integer("Current", "status", "currentNumberScheduled"),
        _integer("Ready", "status", "numberReady"),
        _integer("Up-to-date", "status", "updatedNumberScheduled"),
        _integer("Available", "status", "numberAvailable"),
        (col("Node Selector"), lambda o: format_labels(_at(o, "spec", "template", "spec", "nodeSelector"))),
        AGE,
        *_WORKLOAD_WIDE,
    ],
    ("batch", "jobs"): _JOB_COLUMNS,
    ("batch", "cronjobs"): _CRONJOB_COLUMNS,
    ("apiextensions.k8s.io", "customresourcedefinitions"): [
        NAME,
        (col("Created At", "date"), lambda o: o["metadata"].get("creationTimestamp", "")),
    ],
}
"""Each built-in resource's columns; other built-in resources get ``Name`` and ``Age``."""
