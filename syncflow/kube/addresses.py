"""Addresses that a client built from a kubeconfig held in an API object may not reach: link-local
networks, where clouds serve every instance's metadata and credentials, and the metadata services'
names. Whoever writes the kubeconfig would otherwise make syncflow's workers request them.

A server is refused by its URL (a literal address in any form a resolver reads, or a metadata name)
and again once a connection is made (the peer's address), so a name that resolves to such an
address is refused too, whenever it resolves so.
"""

from __future__ import annotations

import functools
import socket
from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network
from typing import Any, cast

import urllib3

REFUSED_NETWORKS = (
    ip_network("169.254.0.0/16"),  # IPv4 link-local: every cloud's metadata service (169.254.169.254)
    ip_network("fe80::/10"),  # IPv6 link-local
    ip_network("fd00:ec2::254/128"),  # EC2's metadata service over IPv6
    ip_network("64:ff9b::a9fe:0/112"),  # 169.254.0.0/16 through NAT64
)
METADATA_NAMES = frozenset(
    {"metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"}
)
"""Names of metadata services (they resolve to a refused address only inside their cloud)."""
REFUSED = "refused (an operator may allow it with --allow-link-local-servers)"


class RefusedAddressError(Exception):
    """A connection reached a link-local or metadata address; it was closed before anything was sent."""


def _address(host: str) -> IPv4Address | IPv6Address | None:
    """``host`` as the address a resolver reads it as (also IPv4's short and numeric forms, e.g.
    ``2852039166``, and an IPv4-mapped IPv6 address), or None for a name."""
    host = host.strip("[]").partition("%")[0].rstrip(".")
    try:
        address = ip_address(host)
    except ValueError:
        try:
            return IPv4Address(socket.inet_aton(host))
        except (OSError, ValueError):
            return None
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def refused(host: str) -> bool:
    """Whether ``host`` (a name or an address) is link-local or a cloud metadata service."""
    if host.lower().rstrip(".") in METADATA_NAMES:
        return True
    address = _address(host)
    return address is not None and any(address in network for network in REFUSED_NETWORKS)


def guard(manager: urllib3.PoolManager) -> None:
    """Make every connection of ``manager`` (to a server or a proxy) refuse a peer whose address
    ``refused`` names, once connected and before a byte is sent: ``RefusedAddressError``."""
    manager.pool_classes_by_scheme = {
        scheme: _guarded(pool) for scheme, pool in manager.pool_classes_by_scheme.items()
    }


@functools.cache
def _guarded(pool: type[urllib3.HTTPConnectionPool]) -> type[urllib3.HTTPConnectionPool]:
    """``pool`` whose connections check their peer's address."""
    connection: Any = pool.ConnectionCls

    def _new_conn(self: Any) -> socket.socket:
        sock: socket.socket = connection._new_conn(self)
        if refused(str(sock.getpeername()[0])):
            sock.close()
            raise RefusedAddressError(
                f"the cluster's server or proxy-url resolves to a link-local or metadata address: {REFUSED}"
            )
        return sock

    checked = type(f"Guarded{connection.__name__}", (connection,), {"_new_conn": _new_conn})
    return cast(
        type[urllib3.HTTPConnectionPool], type(f"Guarded{pool.__name__}", (pool,), {"ConnectionCls": checked})
    )
