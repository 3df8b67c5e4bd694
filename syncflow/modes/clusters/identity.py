"""What clusters mode calls things: labels, finalizers, endpoint, rule and shard names, synced types."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

KCP = "kcp"
"""The endpoint of the workspace that holds the Clusters and the objects to sync."""
CLUSTER_LABEL = "workloads.kcp.dev/cluster"
"""Schedules an object to the Cluster it names."""
SPLIT_ANNOTATION = "workloads.kcp.dev/split"
"""``"false"`` on an unlabelled Deployment keeps the splitter away from it."""
CLEANUP_FINALIZER = "workload.kcp.dev/cleanup"
"""Held on a Cluster until what syncflow holds for it is released."""
NEGOTIATED_LABEL = "workload.kcp.dev/negotiated"
"""Marks the APIExport of the types the CRD puller serves in kcp from the clusters' schemas."""
_ENDPOINT_PREFIX = "cluster:"
_NAME_MAX = 63


def endpoint(cluster: str) -> str:
    """The engine endpoint of a Cluster: ``cluster:<name>``."""
    return _ENDPOINT_PREFIX + cluster


def cluster_of(endpoint_name: str) -> str | None:
    """The Cluster an endpoint name stands for (None: not a Cluster's)."""
    if not endpoint_name.startswith(_ENDPOINT_PREFIX):
        return None
    return endpoint_name.removeprefix(_ENDPOINT_PREFIX)


def _short(text: str, room: int) -> str:
    """``text``, or its start and a hash when longer than ``room``."""
    if len(text) <= room:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    return f"{text[: room - 11]}-{digest}"


def finalizer(cluster: str) -> str:
    """The finalizer on kcp objects with a copy in ``cluster``: ``workload.kcp.dev/syncer-<name>``."""
    return "workload.kcp.dev/" + _short(f"syncer-{cluster}", _NAME_MAX)


def pull_account(cluster: str) -> str:
    """The account of ``cluster``'s pull syncer in the workspace: ``syncflow-pull-<name>``."""
    return _short(f"syncflow-pull-{cluster}", _NAME_MAX)


def shard_name(root: str, cluster: str) -> str:
    """The Deployment shard of ``root`` for ``cluster``: ``<root>--<cluster>`` (hashed past 253)."""
    return _short(f"{root}--{cluster}", 253)


@dataclass(frozen=True, order=True)
class SyncedType:
    """A type to sync (``--resources``): ``<plural>.<group>``, or ``<plural>`` for the core group."""

    plural: str
    group: str = ""

    @classmethod
    def parse(cls, text: str) -> SyncedType:
        """``deployments.apps`` → (deployments, apps); ``configmaps`` → (configmaps, core)."""
        plural, _, group = text.partition(".")
        return cls(plural, group)

    @property
    def group_resource(self) -> str:
        """``<plural>.<group>`` (``<plural>`` for the core group)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def rule_name(self, cluster: str) -> str:
        """The sync rule of this type for ``cluster``: ``<cluster>~<plural>.<group>``."""
        return f"{cluster}~{self.group_resource}"

    def entry(self, entries: list[dict[str, Any]] | None) -> dict[str, Any] | None:
        """This type's ``status.syncedResources`` entry, if any."""
        wanted = (self.group, self.plural)
        return next((e for e in entries or [] if (e.get("group", ""), e.get("resource")) == wanted), None)


DEPLOYMENTS = SyncedType("deployments", "apps")
"""The type the splitter divides."""
