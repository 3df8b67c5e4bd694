"""What the scheduler and a kubelet do to a pod: bind it to a node, run it, and finish Job pods."""

from __future__ import annotations

import hashlib
import ipaddress

from syncflow.devcluster.crud import now_rfc3339
from syncflow.devcluster.simulate.api import Api
from syncflow.devcluster.simulate.conditions import set_condition
from syncflow.devcluster.simulate.nodes import NODE_IP, POD_CIDR
from syncflow.devcluster.simulate.owners import controller_of
from syncflow.devcluster.simulate.pods import phase
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy

_POD_NETWORK = ipaddress.IPv4Network(POD_CIDR)
_RUNNING_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready", "PodScheduled")


def _containers(pod: Obj) -> list[Obj]:
    return list((pod.get("spec") or {}).get("containers") or [])


def _container_id(pod: Obj, name: str) -> str:
    return "containerd://" + hashlib.sha256(f"{pod['metadata']['uid']}/{name}".encode()).hexdigest()


class Kubelet:
    """Schedules pods onto the fake node and moves them through their phases."""

    def __init__(self, api: Api, node_name: str) -> None:
        self.api = api
        self.node_name = node_name
        self._next_ip = 0

    def _pod_ip(self) -> str:
        self._next_ip += 1
        return str(_POD_NETWORK[2 + self._next_ip % (_POD_NETWORK.num_addresses - 4)])

    def reconcile(self, cluster: str, namespace: str, name: str) -> None:
        """One step for one pod; each write brings the pod back here for the next step."""
        pod = self.api.get(cluster, "", "pods", namespace, name)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return
        if not (pod.get("spec") or {}).get("nodeName"):
            bound = deep_copy(pod)
            bound.setdefault("spec", {})["nodeName"] = self.node_name
            self.api.replace(cluster, "", "pods", pod, bound)
            return
        current = phase(pod)
        if current == "Pending":
            self.api.replace(cluster, "", "pods", pod, {**pod, "status": self._running(pod)}, "status")
        elif current == "Running" and (controller_of(pod) or {}).get("kind") == "Job":
            self.api.replace(cluster, "", "pods", pod, {**pod, "status": _succeeded(pod)}, "status")

    def _running(self, pod: Obj) -> Obj:
        now = now_rfc3339()
        status: Obj = deep_copy(pod.get("status") or {})
        conditions: list[Obj] = status.get("conditions") or []
        gates = [str(g.get("conditionType")) for g in (pod.get("spec") or {}).get("readinessGates") or []]
        for kind in (*_RUNNING_CONDITIONS, *gates):  # readiness gates are met too, as kwok does
            conditions = set_condition(conditions, kind, "True", "", "")
        ip = self._pod_ip()
        status.update(
            phase="Running",
            conditions=[_without_empty(c) for c in conditions],
            hostIP=NODE_IP,
            hostIPs=[{"ip": NODE_IP}],
            podIP=ip,
            podIPs=[{"ip": ip}],
            startTime=status.get("startTime") or now,
            containerStatuses=[
                {
                    "name": c["name"],
                    "image": c.get("image", ""),
                    "imageID": "",
                    "containerID": _container_id(pod, c["name"]),
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": now}},
                    "lastState": {},
                }
                for c in _containers(pod)
            ],
        )
        init = (pod.get("spec") or {}).get("initContainers") or []
        if init:
            status["initContainerStatuses"] = [
                {
                    "name": c["name"],
                    "image": c.get("image", ""),
                    "imageID": "",
                    "containerID": _container_id(pod, c["name"]),
                    "ready": True,
                    "restartCount": 0,
                    "state": {
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": now,
                            "finishedAt": now,
                        }
                    },
                }
                for c in init
            ]
        return status


def _without_empty(condition: Obj) -> Obj:
    return {k: v for k, v in condition.items() if v != ""}


def _succeeded(pod: Obj) -> Obj:
    now = now_rfc3339()
    status: Obj = deep_copy(pod.get("status") or {})
    conditions: list[Obj] = status.get("conditions") or []
    for kind in ("ContainersReady", "Ready"):
        conditions = set_condition(conditions, kind, "False", "PodCompleted", "")
    started = {
        s["name"]: s.get("state", {}).get("running", {}).get("startedAt", now)
        for s in status.get("containerStatuses") or []
    }
    status.update(
        phase="Succeeded",
        conditions=[_without_empty(c) for c in conditions],
        containerStatuses=[
            {
                **s,
                "ready": False,
                "started": False,
                "state": {
                    "terminated": {
                        "exitCode": 0,
                        "reason": "Completed",
                        "startedAt": started.get(s["name"], now),
                        "finishedAt": now,
                        "containerID": s.get("containerID", ""),
                    }
                },
            }
            for s in status.get("containerStatuses") or []
        ],
    )
    return status
