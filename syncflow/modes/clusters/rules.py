"""Clusters mode's front-end to the engine: one sync rule per (Cluster, type).

The rule of a type for Cluster ``east`` syncs every object of the type in the workspace labelled
``workloads.kcp.dev/cluster: east`` (a server-side label selector) to the same namespace and name in
that cluster, creates the namespace on demand, returns the status, holds the finalizer
``workload.kcp.dev/syncer-east`` on the kcp object while the copy exists, and deletes the copy when
the object is deleted or relabelled away. It is ready while the Cluster is Ready and takes kcp's
schema of the type, pending otherwise: objects labelled for it wait, nothing is lost.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kubernetes.client.exceptions import ApiException

from syncflow.api.cluster import PATH
from syncflow.api.conditions import find
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.clusters.identity import CLUSTER_LABEL, KCP, SyncedType, endpoint, finalizer
from syncflow.sync.discovery import find_resource
from syncflow.sync.registry import RuleEntry
from syncflow.sync.rule import (
    DropAnnotations,
    IdentityPlacement,
    Resource,
    Selector,
    Side,
    SyncRule,
    Transform,
)
from syncflow.sync.transforms import ALLOCATED_BY_CLUSTER

Obj = dict[str, Any]
SERVED_TTL = 30.0
"""How long a type kcp serves is not asked about again (a type not served yet is asked every pass)."""


def build_rule(
    cluster: str,
    resource: Resource,
    workspace: str,
    agent: str,
    state_namespace: str,
    cleanup: Literal["keep", "delete"] = "keep",
) -> SyncRule:
    """The rule that syncs ``resource`` objects labelled for ``cluster``; ``cleanup`` says what its
    copies become when the rule goes (the Cluster deleted, the type no longer synced)."""
    transforms: list[Transform] = [DropAnnotations(prefixes=("kcp.io/",))]
    allocated = ALLOCATED_BY_CLUSTER.get(resource.group_resource)
    if allocated is not None:
        transforms.append(allocated)
    return SyncRule(
        name=SyncedType(resource.plural, resource.group).rule_name(cluster),
        agent=agent,
        source=Side(endpoint=KCP, resource=resource, cluster=workspace),
        target=Side(endpoint=endpoint(cluster), resource=resource),
        selector=Selector(labels=f"{CLUSTER_LABEL}={cluster}"),
        placement=IdentityPlacement(),
        transforms=tuple(transforms),
        unmatched="delete",
        finalizer=finalizer(cluster),
        state_namespace=state_namespace,
        release=cleanup,
    )


def pulled(obj: Obj) -> bool:
    """Whether Cluster ``obj`` is synced by a syncer in the cluster (syncMode Pull or None), not centrally."""
    return ((obj.get("spec") or {}).get("syncMode") or "Push") != "Push"


def syncs(obj: Obj, only_cluster: str | None) -> bool:
    """Whether this process syncs to the Cluster ``obj``: the central one syncs Push clusters, a
    syncer of one cluster (``only_cluster``) its own when it is not Push."""
    if only_cluster is None:
        return not pulled(obj)
    return obj["metadata"]["name"] == only_cluster and pulled(obj)


@dataclass
class ClustersRules:
    """Every rule the Clusters ask for (watch side); ``serving`` names the ready ones."""

    kcp: JsonApi
    workspace: str
    agent: str
    state_namespace: str
    types: list[SyncedType]
    only_cluster: str | None = None
    cleanup: Literal["keep", "delete"] = "keep"
    serving: frozenset[str] = frozenset()
    _served: dict[tuple[SyncedType, str], tuple[float, Resource]] = field(default_factory=dict)

    def resource(self, t: SyncedType, version: str) -> Resource | None:
        """``t`` as kcp serves it at ``version`` (served types are remembered for ``SERVED_TTL``)."""
        cached = self._served.get((t, version))
        if cached is not None and time.monotonic() - cached[0] < SERVED_TTL:
            return cached[1]
        found = find_resource(self.kcp, t.group, version, plural=t.plural)
        if found is not None:
            self._served[(t, version)] = (time.monotonic(), found)
        return found

    def preferred_version(self, t: SyncedType) -> str | None:
        """The version kcp prefers for ``t``'s group (None: kcp does not serve the group)."""
        if not t.group:
            return "v1"
        try:
            group = self.kcp.get(f"/apis/{t.group}")
        except ApiException as exc:
            if exc.status in (404, 503):
                return None
            raise
        version = (group.get("preferredVersion") or {}).get("version")
        return str(version) if version else None

    @property
    def cluster_selector(self) -> str:
        """The field selector of the Clusters this process reads: a syncer of one cluster reads only its
        own (its account may read no other Cluster's kubeconfig)."""
        return f"metadata.name={self.only_cluster}" if self.only_cluster is not None else ""

    def _entry(self, obj: Obj, t: SyncedType) -> RuleEntry:
        name = obj["metadata"]["name"]
        status = obj.get("status") or {}
        ready = find(status.get("conditions"), "Ready") or {}
        if ready.get("status") != "True":
            return RuleEntry.pending(
                f"Cluster {name} is not Ready: {ready.get('message') or 'not probed yet'}"
            )
        synced = t.entry(status.get("syncedResources")) or {}
        if synced.get("state") != "Accepted":
            return RuleEntry.pending(
                str(synced.get("message") or f"{t.group_resource} is not negotiated yet")
            )
        version = str((synced.get("versions") or ["v1"])[0])
        resource = self.resource(t, version)
        if resource is None:
            return RuleEntry.pending(f"kcp does not serve {t.group_resource} {version} yet")
        return RuleEntry.ready(self.rule(name, resource))

    def rule(self, cluster: str, resource: Resource) -> SyncRule:
        """The rule that syncs ``resource`` objects labelled for ``cluster``."""
        return build_rule(cluster, resource, self.workspace, self.agent, self.state_namespace, self.cleanup)

    def desired(self) -> Mapping[str, RuleEntry]:
        """One entry per (Cluster this process syncs to, type); a deleting Cluster has none."""
        query = {"fieldSelector": self.cluster_selector} if self.cluster_selector else {}
        entries = {
            t.rule_name(obj["metadata"]["name"]): self._entry(obj, t)
            for obj in self.kcp.get(PATH, **query).get("items") or []
            if not obj["metadata"].get("deletionTimestamp") and syncs(obj, self.only_cluster)
            for t in self.types
        }
        self.serving = frozenset(name for name, entry in entries.items() if entry.state == "ready")
        return entries
