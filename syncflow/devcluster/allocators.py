"""Service cluster IPs and node ports, allocated unique per cluster as kube-apiserver's allocators do."""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from syncflow.devcluster import errors
from syncflow.devcluster.crud import Objects, Target
from syncflow.devcluster.errors import FieldError

Obj = dict[str, Any]

SERVICE_NETWORK = ipaddress.ip_network("10.96.0.0/12")
NODE_PORTS = range(30000, 32768)
_WITH_NODE_PORTS = ("NodePort", "LoadBalancer")


class ServiceAllocator:
    """Admission for Services: keeps allocated values on updates, allocates free ones on create."""

    def __init__(self, objects: Objects) -> None:
        self.objects = objects
        objects.admission.append(self._admit)

    def _used(self, t: Target, new: Obj) -> tuple[set[str], set[int]]:
        """Cluster IPs and node ports held by the cluster's other Services."""
        ips: set[str] = set()
        ports: set[int] = set()
        meta = new["metadata"]
        for _, service in self.objects.store.items(t.cluster, "", "services"):
            other = service["metadata"]
            if (other.get("namespace"), other["name"]) == (meta.get("namespace"), meta.get("name")):
                continue
            spec = service.get("spec") or {}
            ips.update(spec.get("clusterIPs") or [])
            for port in spec.get("ports") or []:
                if port.get("nodePort"):
                    ports.add(int(port["nodePort"]))
        return ips, ports

    def _admit(self, t: Target, new: Obj, old: Obj | None) -> None:
        if (t.rtype.group, t.rtype.plural) != ("", "services") or not isinstance(new.get("spec"), dict):
            return
        spec, old_spec = new["spec"], (old or {}).get("spec") or {}
        service_type = spec.get("type") or "ClusterIP"
        if service_type == "ExternalName":
            return
        ips, node_ports = self._used(t, new)
        if old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        elif not spec.get("clusterIP"):
            spec["clusterIP"] = _free_ip(ips)
        elif spec["clusterIP"] in ips and spec["clusterIP"] != "None":
            wanted = spec["clusterIP"]
            problem = FieldError(
                "spec.clusterIPs",
                "FieldValueInvalid",
                f'Invalid value: []string{{"{wanted}"}}: failed to '
                f"allocate IP {wanted}: provided IP is already allocated",
            )
            raise errors.invalid("Service", str(new["metadata"].get("name", "")), [problem])
        spec["clusterIPs"] = [spec["clusterIP"]]
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        if service_type not in _WITH_NODE_PORTS:
            for port in ports:
                port.pop("nodePort", None)
            return
        kept = {_port_key(p): p.get("nodePort") for p in old_spec.get("ports") or [] if p.get("nodePort")}
        problems = []
        for i, port in enumerate(ports):
            wanted = port.get("nodePort") or kept.get(_port_key(port))
            if wanted and int(wanted) in node_ports:
                problems.append(
                    FieldError(
                        f"spec.ports[{i}].nodePort",
                        "FieldValueInvalid",
                        f"Invalid value: {wanted}: provided port is already allocated",
                    )
                )
                continue
            port["nodePort"] = int(wanted) if wanted else _free_port(node_ports)
            node_ports.add(port["nodePort"])
        if problems:
            raise errors.invalid("Service", str(new["metadata"].get("name", "")), problems)


def _port_key(port: Obj) -> tuple[Any, str]:
    return (port.get("port"), port.get("protocol") or "TCP")


def _free_ip(used: set[str]) -> str:
    for _ in range(1000):
        candidate = str(SERVICE_NETWORK[random.randrange(1, SERVICE_NETWORK.num_addresses - 1)])
        if candidate not in used:
            return candidate
    raise errors.StatusError(500, "InternalError", "Internal error occurred: range is full")


def _free_port(used: set[int]) -> int:
    free = [p for p in NODE_PORTS if p not in used]
    if not free:
        raise errors.StatusError(500, "InternalError", "Internal error occurred: range is full")
    return random.choice(free)
