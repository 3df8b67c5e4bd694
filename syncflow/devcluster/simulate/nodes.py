"""The one fake Node pods run on, Ready from the start."""

from __future__ import annotations

from syncflow.devcluster.crud import now_rfc3339
from syncflow.devcluster.simulate.api import Api
from syncflow.devcluster.simulate.conditions import is_true
from syncflow.devcluster.simulate.workloads import selects
from syncflow.devcluster.store import Obj

NODE_IP = "172.18.0.2"
POD_CIDR = "10.244.0.0/16"
_CAPACITY = {"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "1Ti"}


def _status() -> Obj:
    now = now_rfc3339()
    pressure = {
        "MemoryPressure": "KubeletHasSufficientMemory",
        "DiskPressure": "KubeletHasNoDiskPressure",
        "PIDPressure": "KubeletHasSufficientPID",
    }
    conditions = [
        {
            "type": kind,
            "status": "False",
            "reason": reason,
            "message": "simulated by devcluster",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
        for kind, reason in pressure.items()
    ]
    conditions.append(
        {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status (simulated by devcluster)",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
    )
    return {
        "capacity": _CAPACITY,
        "allocatable": _CAPACITY,
        "conditions": conditions,
        "addresses": [{"type": "InternalIP", "address": NODE_IP}, {"type": "Hostname", "address": ""}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "operatingSystem": "linux",
            "kubeletVersion": "v1.32.0",
            "kubeProxyVersion": "v1.32.0",
            "containerRuntimeVersion": "devcluster://simulated",
            "osImage": "devcluster simulated node",
            "kernelVersion": "",
            "machineID": "",
            "systemUUID": "",
            "bootID": "",
        },
    }


def create_node(api: Api, cluster: str, name: str) -> Obj | None:
    """Create the node (Ready) unless it exists; the stored node."""
    existing = api.get(cluster, "", "nodes", "", name)
    if existing is not None:
        return existing
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "devcluster",
        "type": "simulated",
    }
    body: Obj = {
        "metadata": {"name": name, "labels": labels},
        "spec": {"podCIDR": POD_CIDR, "podCIDRs": [POD_CIDR]},
    }
    created = api.create(cluster, "", "nodes", "", body)
    if created is None:
        return None
    status = _status()
    status["addresses"][1]["address"] = name
    return api.replace(cluster, "", "nodes", created, {**created, "status": status}, "status")


def ready_nodes(api: Api, cluster: str, selector: dict[str, str]) -> list[str]:
    """Names of the nodes that are Ready, not being deleted and carry the ``selector`` labels, sorted."""
    names = []
    for node in api.items(cluster, "", "nodes", None):
        labels = node["metadata"].get("labels") or {}
        if (
            is_true(node, "Ready")
            and not node["metadata"].get("deletionTimestamp")
            and selects(selector, labels)
        ):
            names.append(node["metadata"]["name"])
    return sorted(names)
