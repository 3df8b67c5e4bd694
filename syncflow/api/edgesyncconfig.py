"""``edge.kcp.io/v1alpha1 EdgeSyncConfig``: what an edge syncer moves between a mailbox workspace and its
p-cluster (edge mode).

KubeStellar 0.14's ``edge.kubestellar.io/v2alpha1`` type, field for field (``downSyncedResources``,
``upSyncedResources``, ``conversions``), with label and annotation selectors and two switches:
``returnReportedState`` and ``propagateDeletion``, which apply to the objects the config selects. Every
EdgeSyncConfig of a mailbox workspace applies; they are merged (see ``syncflow.modes.edge.merge``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from syncflow.api.apitype import APIType
from syncflow.api.errors import APIValidationError, validate_object
from syncflow.api.meta import APIModel, Condition, LabelSelector, ObjectMeta

GROUP = "edge.kcp.io"
VERSION = "v1alpha1"
KIND = "EdgeSyncConfig"


class EdgeSyncConfigError(APIValidationError):
    """An EdgeSyncConfig failed validation; ``problems`` lists ``spec.field.path: reason`` lines."""


class ResourceSelector(APIModel):
    """Objects of one kind; every field left empty matches anything."""

    group: str = ""
    """API group ("" for the core group)."""
    version: str = Field(min_length=1)
    """API version, e.g. v1."""
    kind: str = Field(min_length=1)
    """Kind, e.g. Deployment."""
    namespace: str | None = None
    """Only objects in this namespace (namespaced kinds)."""
    name: str | None = None
    """Only the object of this name."""
    label_selector: LabelSelector | None = None
    """Only objects whose labels match."""
    annotation_selector: LabelSelector | None = None
    """Only objects whose annotations match (label-selector syntax over annotations)."""


class ObjectRef(APIModel):
    """One object by kind and name (a side of a conversion)."""

    group: str = ""
    """API group ("" for the core group)."""
    version: str = Field(min_length=1)
    """API version."""
    kind: str = Field(min_length=1)
    """Kind."""
    name: str = Field(min_length=1)
    """Object name."""


class Conversion(APIModel):
    """Renaturing: the object stored as ``upstream`` in the mailbox is ``downstream`` in the p-cluster."""

    upstream: ObjectRef
    """The denatured object in the mailbox workspace."""
    downstream: ObjectRef
    """Its natural form in the p-cluster."""


class EdgeSyncConfigSpec(APIModel):
    """What goes down, what comes up, and how."""

    down_synced_resources: list[ResourceSelector] | None = None
    """Objects of the mailbox workspace created and kept in the p-cluster."""
    up_synced_resources: list[ResourceSelector] | None = None
    """Objects of the p-cluster created and kept in the mailbox workspace (polled)."""
    conversions: list[Conversion] | None = None
    """Denatured objects and their natural form."""
    return_reported_state: bool = True
    """Copy the p-cluster's .status of the objects this config downsyncs back to the mailbox."""
    propagate_deletion: bool = True
    """Delete in the p-cluster what this config downsyncs once it is deleted in the mailbox (else leave
    it, marked orphaned)."""


class EdgeSyncConfigStatus(APIModel, extra="ignore"):
    """What the edge syncer observed."""

    conditions: list[Condition] | None = None
    """Ready, Conflict when merged configs disagree, Refused when a selector is out of scope."""
    down_synced_types: int | None = None
    """How many types go down."""
    up_synced_types: int | None = None
    """How many types come up."""
    last_syncer_heartbeat_time: str | None = None
    """KubeStellar 0.14's field (kept for its manifests)."""


class EdgeSyncConfig(APIModel):
    """What an edge syncer moves between its mailbox workspace and its p-cluster."""

    api_version: Literal["edge.kcp.io/v1alpha1"] = "edge.kcp.io/v1alpha1"
    """APIVersion of this object."""
    kind: Literal["EdgeSyncConfig"] = "EdgeSyncConfig"
    """Kind of this object."""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    """Standard object metadata."""
    spec: EdgeSyncConfigSpec = Field(default_factory=EdgeSyncConfigSpec)
    """What goes down, what comes up, and how."""
    status: EdgeSyncConfigStatus | None = None
    """What the edge syncer observed."""

    @classmethod
    def parse(cls, obj: Mapping[str, Any]) -> EdgeSyncConfig:
        """Validate a manifest or API object; raises :class:`EdgeSyncConfigError` listing every problem."""
        return validate_object(cls, obj, EdgeSyncConfigError)


API_TYPE = APIType(
    model=EdgeSyncConfig,
    group=GROUP,
    version=VERSION,
    kind=KIND,
    plural="edgesyncconfigs",
    scope="Cluster",
    printer_columns=(
        {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ),
)
"""The CRD facts of EdgeSyncConfig."""
