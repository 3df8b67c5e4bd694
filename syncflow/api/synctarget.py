"""``workload.kcp.io/v1alpha1 SyncTarget``: a physical cluster registered in a kcp workspace (workload mode).

The fields seed-style manifests use (the TMC workload syncer's): where the cluster is, which exported
resources it runs, what it can hold; the status the syncer and kcp keep — heartbeats, conditions and
the state of every resource type to sync. kcp v0.11's own fields (``unschedulable``, ``evictAfter``,
``cells``, ``lastSyncerHeartbeatTime``) are accepted too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from syncflow.api.apitype import APIType
from syncflow.api.errors import APIValidationError, validate_object
from syncflow.api.meta import APIModel, Condition, ObjectMeta

GROUP = "workload.kcp.io"
VERSION = "v1alpha1"
KIND = "SyncTarget"

ResourceState = Literal["Pending", "Accepted", "Incompatible"]


class SyncTargetError(APIValidationError):
    """A SyncTarget failed validation; ``problems`` lists ``spec.field.path: reason`` lines."""


class WorkloadCluster(APIModel):
    """The physical cluster behind the SyncTarget."""

    name: str | None = None
    """A name for the cluster (informational)."""
    endpoint: str | None = None
    """The cluster's API server URL (informational: the syncer uses its own kubeconfig)."""


class SupportedAPIExport(APIModel):
    """An exported resource type the physical cluster runs."""

    export: str = Field(min_length=1)
    """The APIExport's name, e.g. ``kubernetes``."""
    path: str | None = None
    """The APIExport's workspace path; default: ``root:compute`` for ``kubernetes``, else this workspace."""
    resource: str | None = Field(default=None, pattern=r"^([a-z0-9.-]+/)?v[0-9a-z]+/[a-z0-9-]+$")
    """``<group>/<version>/<plural>`` (``v1/<plural>`` for the core group); empty: every resource of it."""


class Capability(APIModel):
    """Something the cluster offers, e.g. ``{type: cpu, resource: cpu, capacity: "16"}``."""

    type: str = Field(min_length=1)
    """The kind of capability."""
    resource: str | None = None
    """The resource it concerns."""
    capacity: str | None = None
    """How much of it (a quantity)."""


class SyncTargetSpec(APIModel):
    """What the physical cluster is and runs."""

    workload_cluster: WorkloadCluster | None = None
    """Where the physical cluster is."""
    supported_api_exports: list[SupportedAPIExport] | None = Field(default=None, alias="supportedAPIExports")
    """Resource types to sync besides the workspace's ConfigMaps, Secrets and CRDs."""
    capabilities: list[Capability] | None = None
    """What the cluster offers."""
    unschedulable: bool | None = None
    """kcp v0.11: no new workloads are placed here."""
    evict_after: str | None = None
    """kcp v0.11: evict workloads after this time."""
    cells: dict[str, str] | None = None
    """kcp v0.11: labels of the cells this target is in."""


class Heartbeat(APIModel):
    """Heartbeats the syncer sent."""

    count: int = Field(default=0, ge=0)
    """Heartbeats recorded so far."""
    last_heartbeat: str | None = None
    """When the last heartbeat was recorded (RFC 3339)."""
    errors: int = Field(default=0, ge=0)
    """Heartbeats in which the physical cluster did not answer."""


class SyncedResource(APIModel):
    """One resource type to sync and whether the physical cluster can take it."""

    group: str = ""
    """API group ("" for the core group)."""
    resource: str
    """Plural resource name."""
    versions: list[str] | None = None
    """Versions synced."""
    identity_hash: str | None = None
    """The identity of the APIExport that serves it in kcp."""
    state: ResourceState = "Pending"
    """Pending until checked; Accepted when the physical cluster serves it; else Incompatible."""
    message: str | None = None
    """Why it is Pending or Incompatible."""


class SyncTargetStatus(APIModel, extra="ignore"):
    """What the syncer and kcp observed."""

    syncer_identifier: str | None = None
    """The syncer serving this target (``syncer-<hash>``)."""
    last_heartbeat_time: str | None = None
    """When the syncer last sent a heartbeat."""
    last_syncer_heartbeat_time: str | None = None
    """kcp v0.11's name of the same."""
    heartbeat: Heartbeat | None = None
    """Heartbeat counts."""
    conditions: list[Condition] | None = None
    """Ready, SyncerReady and HeartbeatReady."""
    synced_resources: list[SyncedResource] | None = None
    """Every resource type to sync and its state."""


class SyncTarget(APIModel):
    """A physical cluster registered in a kcp workspace; a syncer keeps its workloads in sync."""

    api_version: Literal["workload.kcp.io/v1alpha1"] = "workload.kcp.io/v1alpha1"
    """APIVersion of this object."""
    kind: Literal["SyncTarget"] = "SyncTarget"
    """Kind of this object."""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    """Standard object metadata."""
    spec: SyncTargetSpec = Field(default_factory=SyncTargetSpec)
    """What the physical cluster is and runs."""
    status: SyncTargetStatus | None = None
    """What the syncer and kcp observed."""

    @classmethod
    def parse(cls, obj: Mapping[str, Any]) -> SyncTarget:
        """Validate a manifest or API object; raises :class:`SyncTargetError` listing every problem."""
        return validate_object(cls, obj, SyncTargetError)


API_TYPE = APIType(
    model=SyncTarget,
    group=GROUP,
    version=VERSION,
    kind=KIND,
    plural="synctargets",
    scope="Cluster",
    printer_columns=(
        {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Heartbeat", "type": "date", "jsonPath": ".status.lastHeartbeatTime"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ),
)
"""The CRD facts of SyncTarget."""
