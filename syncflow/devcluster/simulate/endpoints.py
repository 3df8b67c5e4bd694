"""Endpoints and EndpointSlices of Services with a selector, from the pods it selects.

Ready pods are ``addresses`` (``ready: true`` in the slice), others with an IP
``notReadyAddresses``; terminating pods are left out. A named ``targetPort`` is resolved from the
first selected pod that declares it. One EndpointSlice per Service, owned by it; both objects
hold at most ``MAX_ENDPOINTS`` addresses (kube splits slices at 100 and truncates Endpoints at 1000).
"""

from __future__ import annotations

from syncflow.devcluster.simulate.api import Api
from syncflow.devcluster.simulate.owners import OwnerIndex, owner_reference
from syncflow.devcluster.simulate.pods import is_active, is_ready
from syncflow.devcluster.simulate.workloads import controlled, selects
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy

MAX_ENDPOINTS = 1000
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY = {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}


def _target_port(port: Obj, pods: list[Obj]) -> int | None:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for pod in pods:
        for container in (pod.get("spec") or {}).get("containers") or []:
            for declared in container.get("ports") or []:
                if declared.get("name") == target:
                    return int(declared["containerPort"])
    return None


def _ports(service: Obj, pods: list[Obj]) -> list[Obj]:
    ports = []
    for port in (service.get("spec") or {}).get("ports") or []:
        number = _target_port(port, pods)
        if number is not None:
            entry = {"port": number, "protocol": port.get("protocol", "TCP")}
            if port.get("name"):
                entry["name"] = port["name"]
            ports.append(entry)
    return ports


def _target_ref(pod: Obj) -> Obj:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}


class EndpointsController:
    """Keeps a Service's Endpoints and EndpointSlice in line with its selected pods."""

    def __init__(self, api: Api, index: OwnerIndex) -> None:
        self.api = api
        self.index = index

    def reconcile(self, cluster: str, namespace: str, name: str) -> None:
        """Write one Service's Endpoints and EndpointSlice (or delete its Endpoints when it is gone)."""
        service = self.api.get(cluster, "", "services", namespace, name)
        endpoints = self.api.get(cluster, "", "endpoints", namespace, name)
        if service is None:
            if endpoints is not None:
                self.api.delete(cluster, "", "endpoints", endpoints)
            return
        selector = (service.get("spec") or {}).get("selector")
        if not selector or service["metadata"].get("deletionTimestamp"):
            return
        pods = [
            p
            for p in self.api.items(cluster, "", "pods", namespace)
            if selects(selector, p["metadata"].get("labels"))
            and is_active(p)
            and (p.get("status") or {}).get("podIP")
        ][:MAX_ENDPOINTS]
        ports = _ports(service, pods)
        self._endpoints(cluster, service, endpoints, pods, ports)
        self._slice(cluster, service, pods, ports)

    def _endpoints(
        self, cluster: str, service: Obj, current: Obj | None, pods: list[Obj], ports: list[Obj]
    ) -> None:
        meta = service["metadata"]

        def address(pod: Obj) -> Obj:
            return {
                "ip": pod["status"]["podIP"],
                "nodeName": pod["spec"].get("nodeName", ""),
                "targetRef": _target_ref(pod),
            }

        subset: Obj = {}
        ready = [address(p) for p in pods if is_ready(p)]
        not_ready = [address(p) for p in pods if not is_ready(p)]
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": meta["name"], "labels": dict(meta.get("labels") or {})},
        }
        if subset and ports:
            body["subsets"] = [{**subset, "ports": ports}]
        if current is None:
            self.api.create(cluster, "", "endpoints", meta["namespace"], body)
            return
        updated = deep_copy(current)
        updated["metadata"]["labels"] = body["metadata"]["labels"]
        updated.pop("subsets", None)
        if "subsets" in body:
            updated["subsets"] = body["subsets"]
        self.api.replace(cluster, "", "endpoints", current, updated)

    def _slice(self, cluster: str, service: Obj, pods: list[Obj], ports: list[Obj]) -> None:
        meta = service["metadata"]
        endpoints = [
            {
                "addresses": [p["status"]["podIP"]],
                "conditions": {"ready": is_ready(p), "serving": is_ready(p), "terminating": False},
                "nodeName": p["spec"].get("nodeName", ""),
                "targetRef": _target_ref(p),
            }
            for p in pods
        ]
        labels = {**(meta.get("labels") or {}), SERVICE_NAME_LABEL: meta["name"], **MANAGED_BY}
        existing = controlled(self.api, self.index, cluster, service, "discovery.k8s.io", "endpointslices")
        if not existing:
            body: Obj = {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "generateName": f"{meta['name']}-",
                    "labels": labels,
                    "ownerReferences": [owner_reference(service)],
                },
                "addressType": "IPv4",
                "endpoints": endpoints,
                "ports": ports,
            }
            self.api.create(cluster, "discovery.k8s.io", "endpointslices", meta["namespace"], body)
            return
        current = existing[0]
        updated = {**deep_copy(current), "endpoints": endpoints, "ports": ports}
        updated["metadata"]["labels"] = labels
        self.api.replace(cluster, "discovery.k8s.io", "endpointslices", current, updated)
