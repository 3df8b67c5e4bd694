"""Services of type LoadBalancer get ``status.loadBalancer.ingress[].ip`` from a pool after a delay.

Like a cloud controller (or MetalLB / kwok): an address is given once ``--load-balancer-delay``
seconds have passed since the Service was first seen without one; it is released when the
Service is deleted or stops being a LoadBalancer. When the pool is exhausted the Service stays
pending (and a ``simulate.loadbalancer.exhausted`` event is logged).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable

from syncflow.devcluster.simulate.api import Api
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.devcluster.simulate")


def _ingress(service: Obj) -> list[Obj]:
    return list(((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or [])


class LoadBalancers:
    """Gives LoadBalancer Services an address; ``later(delay)`` brings the Service back after ``delay``."""

    def __init__(
        self,
        api: Api,
        pool: tuple[ipaddress.IPv4Address, ipaddress.IPv4Address],
        delay: float,
        clock: Callable[[], float],
        later: Callable[[float, str, str, str], None],
    ) -> None:
        self.api = api
        self.first, self.last = pool
        self.delay = delay
        self.clock = clock
        self.later = later
        self._waiting: dict[tuple[str, str, str], float] = {}  # Services seen without an address -> since

    def reconcile(self, cluster: str, namespace: str, name: str) -> None:
        """Give, keep or take back one Service's address."""
        key = (cluster, namespace, name)
        service = self.api.get(cluster, "", "services", namespace, name)
        wanted = service is not None and (service.get("spec") or {}).get("type") == "LoadBalancer"
        if service is None or not wanted or service["metadata"].get("deletionTimestamp"):
            self._waiting.pop(key, None)
            if service is not None and _ingress(service):
                self._write(cluster, service, [])
            return
        if _ingress(service):
            self._waiting.pop(key, None)
            return
        since = self._waiting.setdefault(key, self.clock())
        remaining = since + self.delay - self.clock()
        if remaining > 0:
            self.later(remaining, cluster, namespace, name)
            return
        ip = self._free_address(cluster)
        if ip is None:
            log_event(
                logger,
                "simulate.loadbalancer.exhausted",
                level=logging.WARNING,
                namespace=namespace,
                name=name,
            )
            return
        del self._waiting[key]
        self._write(cluster, service, [{"ip": ip, "ipMode": "VIP"}])

    def _free_address(self, cluster: str) -> str | None:
        used = {i.get("ip") for s in self.api.items(cluster, "", "services", None) for i in _ingress(s)}
        address = self.first
        while address <= self.last:
            if str(address) not in used:
                return str(address)
            address += 1
        return None

    def _write(self, cluster: str, service: Obj, ingress: list[Obj]) -> None:
        status = deep_copy(service.get("status") or {})
        status["loadBalancer"] = {"ingress": ingress} if ingress else {}
        self.api.replace(cluster, "", "services", service, {**service, "status": status}, "status")
