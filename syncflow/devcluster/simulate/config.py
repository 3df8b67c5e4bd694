"""Settings of the simulated controllers."""

from __future__ import annotations

import ipaddress

from pydantic import BaseModel, Field

DEFAULT_LOAD_BALANCER_IPS = "172.18.255.200-172.18.255.250"


def parse_ip_range(text: str) -> tuple[ipaddress.IPv4Address, ipaddress.IPv4Address]:
    """``FIRST-LAST``, a single address or a CIDR as (first, last); ValueError when malformed."""
    text = text.strip()
    if "/" in text:
        network = ipaddress.IPv4Network(text, strict=False)
        return network.network_address, network.broadcast_address
    first_text, _, last_text = text.partition("-")
    first = ipaddress.IPv4Address(first_text.strip())
    last = ipaddress.IPv4Address(last_text.strip()) if last_text else first
    if last < first:
        raise ValueError(f"{text!r}: the last address is before the first")
    return first, last


class SimulationConfig(BaseModel, frozen=True):
    """What the simulation does and how much it may do."""

    node_name: str = "devcluster-node"
    load_balancer_ips: str = DEFAULT_LOAD_BALANCER_IPS  # FIRST-LAST, one address or a CIDR
    load_balancer_delay: float = Field(default=0.5, ge=0)  # seconds before a LoadBalancer gets its IP
    max_replicas: int = Field(default=1000, ge=0)  # pods one workload may have; more are not created
    writes_per_pass: int = Field(default=100, ge=1)  # creates/deletes of one reconcile; the rest requeue
    queue_limit: int = Field(default=100_000, ge=1)  # distinct pending keys; beyond it keys are dropped

    def load_balancer_pool(self) -> tuple[ipaddress.IPv4Address, ipaddress.IPv4Address]:
        """The pool as (first, last)."""
        return parse_ip_range(self.load_balancer_ips)
