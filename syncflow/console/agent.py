"""The agent's processes as the overview shows them: the watcher holding the leader Lease
(``syncflow.kube.leader``) and the Celery workers that answer a ping. Each read has a short timeout
and turns any failure into a message in the view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from syncflow.console.models import Leader, Workers
from syncflow.kube.jsonapi import JsonApi
from syncflow.util.neterrors import describe, network_reason

TIMEOUT = (2.0, 2.0)
"""Connect and read timeouts (s) of the Lease read."""
PING_TIMEOUT = 1.0
"""Seconds the workers have to answer a ping."""


def lease_name(agent: str) -> str:
    """The watcher's leader Lease (``syncflow.sync.process``)."""
    return f"syncagent.{agent}"


def read_leader(client: Callable[[], ApiClient], namespace: str, agent: str) -> Leader:
    """Who holds the agent's Lease in ``namespace`` of the cluster ``client`` connects to."""
    name = f"{namespace}/{lease_name(agent)}"
    path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease_name(agent)}"
    try:
        lease: dict[str, Any] = JsonApi(client(), timeout=TIMEOUT).get(path)
    except ApiException as exc:
        if exc.status == 404:
            return Leader(lease=name, error="no Lease: no watcher of this agent has run")
        return Leader(lease=name, error=describe(exc))
    except Exception as exc:  # unreachable, no kubeconfig: shown, not a failed page
        return Leader(lease=name, error=f"cannot read the Lease: {network_reason(exc)}")
    spec = lease.get("spec") or {}
    return Leader(lease=name, holder=spec.get("holderIdentity"), renewed=spec.get("renewTime"))


def ping_workers(
    ping: Callable[[float], list[dict[str, Any]] | None], timeout: float = PING_TIMEOUT
) -> Workers:
    """The workers that answer ``ping`` (Celery's ``control.ping``) within ``timeout``."""
    try:
        replies = ping(timeout) or []
    except Exception as exc:  # the broker is away
        return Workers(error=f"cannot ping the workers: {network_reason(exc)}")
    return Workers(live=sorted(name for reply in replies for name in reply))
