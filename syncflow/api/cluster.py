"""``workload.kcp.dev/v1alpha1 Cluster``: a physical cluster registered in a kcp workspace (clusters mode).

The seed's type (kcp's multi-cluster prototype): ``spec.kubeconfig`` says how to reach the cluster;
the status says whether it answers (``Ready`` with reasons ``Connected``, ``InvalidKubeconfig``,
``Unreachable``, ``Unauthorized``), when it was last probed, and which resource types it takes. The
kubeconfig is a credential: syncflow never logs it, never puts it in an error, a key or a task
argument, and accepts only inline credentials (no files, no exec or auth-provider plugins).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from syncflow.api.apitype import APIType
from syncflow.api.errors import APIValidationError, validate_object
from syncflow.api.meta import APIModel, Condition, ObjectMeta
from syncflow.api.synctarget import SyncedResource

GROUP = "workload.kcp.dev"
VERSION = "v1alpha1"
KIND = "Cluster"
PLURAL = "clusters"
PATH = f"/apis/{GROUP}/{VERSION}/{PLURAL}"

SyncMode = Literal["Push", "Pull", "None"]
ReadyReason = Literal["Connected", "InvalidKubeconfig", "Unreachable", "Unauthorized", "NoSyncer"]


class ClusterError(APIValidationError):
    """A Cluster failed validation; ``problems`` lists ``spec.field.path: reason`` lines (never values
    of ``spec.kubeconfig``)."""


class ClusterSpec(APIModel):
    """How to reach the cluster and who syncs to it."""

    kubeconfig: str = Field(min_length=1, repr=False)
    """A kubeconfig (YAML) for the cluster; its current context is used. Credentials and certificates
    must be inline (token, client-certificate-data, certificate-authority-data ...)."""
    sync_mode: SyncMode | None = None
    """Push (default): syncflow's workers sync to the cluster. Pull: a syncer installed in the cluster
    does (``syncflow clusters manifest``). None: the operator runs one by hand."""


class ClusterStatus(APIModel, extra="ignore"):
    """What the cluster controller observed."""

    conditions: list[Condition] | None = None
    """Ready: whether the cluster answers with the kubeconfig's credentials."""
    synced_resources: list[SyncedResource] | None = None
    """Every resource type to sync and whether this cluster takes kcp's schema of it."""
    last_probe_time: str | None = None
    """When the cluster was last probed (RFC 3339)."""
    last_syncer_heartbeat_time: str | None = None
    """When the syncer that runs in the cluster (syncMode Pull or None) last said it runs (RFC 3339)."""


class Cluster(APIModel):
    """A physical cluster that objects labelled ``workloads.kcp.dev/cluster: <name>`` are synced to."""

    api_version: Literal["workload.kcp.dev/v1alpha1"] = "workload.kcp.dev/v1alpha1"
    """APIVersion of this object."""
    kind: Literal["Cluster"] = "Cluster"
    """Kind of this object."""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    """Standard object metadata."""
    spec: ClusterSpec
    """How to reach the cluster."""
    status: ClusterStatus | None = None
    """What the cluster controller observed."""

    @classmethod
    def parse(cls, obj: Mapping[str, Any]) -> Cluster:
        """Validate an API object; raises :class:`ClusterError` listing every problem."""
        return validate_object(cls, obj, ClusterError)

    @property
    def sync_mode(self) -> SyncMode:
        """Who syncs objects to the cluster (Push when unset)."""
        return self.spec.sync_mode or "Push"


API_TYPE = APIType(
    model=Cluster,
    group=GROUP,
    version=VERSION,
    kind=KIND,
    plural=PLURAL,
    scope="Cluster",
    printer_columns=(
        {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Reason", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].reason'},
        {"name": "Sync", "type": "string", "jsonPath": ".spec.syncMode"},
        {"name": "Probed", "type": "date", "jsonPath": ".status.lastProbeTime"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ),
)
"""The CRD facts of Cluster."""
