"""``syncagent.kcp.io/v1alpha1 PublishedResource``: how a service-cluster API type is published to kcp.

Field for field the api-syncagent type (``sdk/apis/syncagent/v1alpha1/published_resource.go``),
with the checks api-syncagent's CRD makes (CEL rules, enums, patterns) and those its controllers
make at runtime (version XOR versions, one mutation kind per step, one object shape).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from syncflow.api.apitype import APIType
from syncflow.api.errors import APIValidationError, validate_object
from syncflow.api.meta import (
    APIModel,
    Condition,
    LabelSelector,
    LabelSelectorFields,
    ObjectMeta,
    exactly_one,
    rule_error,
)
from syncflow.gocompat.goregexp import RegexpError, compile_regexp
from syncflow.mutation.base import MutationError
from syncflow.mutation.mutator import compile_step
from syncflow.templating import TemplateError, compile_template

GROUP = "syncagent.kcp.io"
VERSION = "v1alpha1"
KIND = "PublishedResource"


class PublishedResourceError(APIValidationError):
    """A PublishedResource failed validation; ``problems`` lists ``spec.field.path: reason`` lines."""


# --- spec.resource and spec.projection ------------------------------------------------------------


class SourceResource(APIModel):
    """The API type on the service cluster to publish."""

    api_group: str
    """The API group, e.g. "cert-manager.io"; "" for the core group."""
    kind: str = Field(min_length=1)
    """The kind, e.g. "Certificate"."""
    versions: list[str] | None = None
    """The versions to publish; empty or absent publishes every served version."""
    version: str | None = None
    """Deprecated: use versions. Publishes only this version."""

    @model_validator(mode="after")
    def _check(self) -> SourceResource:
        if self.version and self.versions:
            raise rule_error([("version", "Forbidden: version and versions are mutually exclusive")])
        return self

    @property
    def selected_versions(self) -> list[str]:
        """The versions asked for (``version`` or ``versions``); empty means every served version."""
        return [self.version] if self.version else list(self.versions or [])


class Projection(APIModel):
    """How the published type's group, versions, names and scope change in kcp."""

    group: str | None = None
    """The API group in kcp; empty keeps the original."""
    version: str | None = None
    """Deprecated: use versions. Only allowed when exactly one version is selected."""
    versions: dict[str, str] | None = None
    """Renames versions: original version → version in kcp. The results must be unique."""
    kind: str | None = None
    """The kind in kcp; also sets listKind, singular (lowercase kind) and plural (singular + "s")."""
    plural: str | None = None
    """Overrides the plural derived from kind."""
    scope: Literal["Cluster", "Namespaced"] | None = None
    """The scope in kcp."""
    short_names: list[str] | None = None
    """Short names in kcp: absent keeps the original ones, [] removes them."""
    categories: list[str] | None = None
    """Categories in kcp: absent keeps the original ones, [] removes them."""

    @model_validator(mode="after")
    def _check(self) -> Projection:
        seen: dict[str, str] = {}
        problems: list[tuple[str, str]] = []
        for old, new in (self.versions or {}).items():
            if new in seen:
                problems.append(
                    ("versions", f'Duplicate value: "{new}": both {seen[new]} and {old} map to it')
                )
            seen.setdefault(new, old)
        if problems:
            raise rule_error(problems)
        return self


# --- spec.naming, spec.filter, spec.synchronization -----------------------------------------------


class Naming(APIModel):
    """How local objects are named: Go templates over .Object, .ClusterName and .ClusterPath."""

    namespace: str | None = None
    """The local namespace; default "{{ .ClusterName }}"."""
    name: str | None = None
    """The local name; default "{{ .Object.metadata.namespace | sha3short }}-" followed by
    "{{ .Object.metadata.name | sha3short }}"."""


class Filter(APIModel):
    """Restricts which kcp objects are synced."""

    namespace: LabelSelector | None = None
    """Matched against the labels of the object's kcp Namespace."""
    resource: LabelSelector | None = None
    """Matched against the labels of the object itself."""


class Synchronization(APIModel):
    """Whether objects are synced at all."""

    enabled: bool
    """False publishes the schema only (required for types used as related resources)."""


# --- spec.mutation --------------------------------------------------------------------------------


class DeleteMutation(APIModel):
    """Removes the value at path."""

    path: str
    """A gjson/sjson path without a leading dot, e.g. "spec.secretName"."""


class RegexMutation(APIModel):
    """Replaces matches of pattern in the value at path (as a string)."""

    path: str
    """A gjson/sjson path without a leading dot."""
    pattern: str | None = None
    """A Go (RE2) regular expression; empty sets the whole value to replacement."""
    replacement: str | None = None
    """The replacement; $1 or ${name} refer to capture groups, as in Go's ReplaceAllString."""


class TemplateMutation(APIModel):
    """Sets the value at path to a rendered html/template (.Value, .LocalObject, .RemoteObject)."""

    path: str
    """A gjson/sjson path without a leading dot."""
    template: str
    """The template."""


class CELMutation(APIModel):
    """Sets the value at path to a CEL expression's result (value, self, other)."""

    path: str
    """A gjson/sjson path without a leading dot."""
    expression: str
    """The CEL expression."""


class Mutation(APIModel):
    """One mutation step: exactly one of delete, regex, template or cel."""

    delete: DeleteMutation | None = None
    """Remove a value."""
    regex: RegexMutation | None = None
    """Rewrite a value with a regular expression."""
    template: TemplateMutation | None = None
    """Set a value from a template."""
    cel: CELMutation | None = None
    """Set a value from a CEL expression."""

    @model_validator(mode="after")
    def _check(self) -> Mutation:
        problems = exactly_one(self, ("delete", "regex", "template", "cel"))
        if problems:
            raise rule_error(problems)
        try:
            compile_step(self.model_dump(by_alias=True, exclude_none=True))
        except MutationError as err:
            kind = next(k for k in ("delete", "regex", "template", "cel") if getattr(self, k) is not None)
            raise rule_error([(kind, f"Invalid value: {err}")]) from None
        return self


class MutationSpec(APIModel):
    """Mutation steps, applied in order."""

    spec: list[Mutation] | None = None
    """Applied to objects going kcp → service cluster."""
    status: list[Mutation] | None = None
    """Applied to status going service cluster → kcp."""


# --- spec.related ---------------------------------------------------------------------------------


class RegularExpression(APIModel):
    """A Go regular-expression replacement."""

    pattern: str | None = None
    """The pattern (RE2); empty replaces the whole value."""
    replacement: str | None = None
    """The replacement; $1 or ${name} refer to capture groups."""

    @model_validator(mode="after")
    def _check(self) -> RegularExpression:
        try:
            if self.pattern:
                compile_regexp(self.pattern)
        except RegexpError as err:
            raise rule_error([("pattern", f"Invalid value: {err}")]) from None
        return self


class TemplateExpression(APIModel):
    """A Go template producing a string."""

    template: str | None = None
    """The template; an empty result means "not yet"."""

    @model_validator(mode="after")
    def _check(self) -> TemplateExpression:
        try:
            if self.template:
                compile_template(self.template)
        except TemplateError as err:
            raise rule_error([("template", f"Invalid value: {err}")]) from None
        return self


class ObjectReference(APIModel):
    """A value inside the primary object (both sides), optionally rewritten by a regex."""

    path: str
    """A gjson path such as "spec.secretName"; arrays are allowed."""
    regex: RegularExpression | None = None
    """Applied to the value found."""


class SelectorRewrite(APIModel):
    """How a selected object's name or namespace becomes the destination's: regex or template."""

    regex: RegularExpression | None = None
    """A regular-expression replacement."""
    template: TemplateExpression | None = None
    """A template over .Value and .RelatedObject."""

    @model_validator(mode="after")
    def _check(self) -> SelectorRewrite:
        problems = exactly_one(self, ("regex", "template"))
        if problems:
            raise rule_error(problems)
        return self


class ObjectSelector(LabelSelectorFields):
    """Related objects found by labels on the origin side (keys and values may be templates)."""

    rewrite: SelectorRewrite
    """How the destination name (or namespace) is formed."""


class ObjectLocator(APIModel):
    """Exactly one way to locate related objects (or their namespace)."""

    reference: ObjectReference | None = None
    """A value inside the primary object."""
    selector: ObjectSelector | None = None
    """A label selector on the origin side."""
    template: TemplateExpression | None = None
    """A Go template over .Side, .Object, .ClusterName and .ClusterPath."""

    @model_validator(mode="after")
    def _check_shape(self) -> ObjectLocator:
        problems = exactly_one(self, ("reference", "selector", "template"))
        if problems:
            raise rule_error(problems)
        return self


class RelatedObject(ObjectLocator):
    """Where related objects are found on the origin side and placed on the destination side."""

    namespace: ObjectLocator | None = None
    """The related objects' namespace; default the primary's (required for cluster-scoped primaries)."""


class RelatedProjection(APIModel):
    """The related resource's group, version and resource on the destination side."""

    group: str | None = None
    """The destination API group."""
    version: str | None = None
    """The destination API version."""
    resource: str | None = None
    """The destination resource (plural)."""


class WatchByOwner(APIModel):
    """Map a changed related object to its primary through an owner reference of the primary's kind."""


class RelatedWatch(APIModel):
    """How a changed related object is mapped to its primary: exactly one of byOwner or bySelector."""

    by_owner: WatchByOwner | None = None
    """Through owner references."""
    by_selector: LabelSelector | None = None
    """Every primary matching this selector."""

    @model_validator(mode="after")
    def _check(self) -> RelatedWatch:
        problems = exactly_one(self, ("by_owner", "by_selector"))
        if problems:
            raise rule_error(problems)
        return self


class RelatedResource(APIModel):
    """Objects that belong to the primary (e.g. a generated Secret) and are synced along with it."""

    identifier: str = Field(max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    """Unique within the PublishedResource; a lowercase RFC 1123 label."""
    origin: Literal["service", "kcp"]
    """The side the objects come from."""
    group: str | None = None
    """The API group; "" for the core group."""
    version: str | None = None
    """The API version."""
    resource: str | None = None
    """The resource (plural), e.g. "secrets"."""
    kind: Literal["ConfigMap", "Secret"] | None = None
    """Deprecated: use group, version and resource."""
    identity_hash: str | None = None
    """The identity hash of the APIExport providing the resource in kcp."""
    cleanup: bool | None = None
    """Delete the destination copies when the primary is deleted."""
    projection: RelatedProjection | None = None
    """The GVR on the destination side."""
    object: RelatedObject
    """How the objects are found and where their copies go."""
    mutation: MutationSpec | None = None
    """Mutations of the related objects."""
    watch: RelatedWatch | None = None
    """Watch the related resource and map changes to the primary."""
    sync_status: bool | None = None
    """Also sync status, in the same direction as the spec."""

    @model_validator(mode="after")
    def _check(self) -> RelatedResource:
        has_version, has_resource = self.version is not None, self.resource is not None
        rules = [
            (
                (self.kind is not None) == (has_version or has_resource),
                "must specify either kind (deprecated) or group, version, resource",
            ),
            (has_resource != has_version, "resource and version must be configured together or not at all"),
            (
                self.group is not None and not (has_resource and has_version),
                "configuring a group also requires a version and resource",
            ),
            (
                self.identity_hash is not None
                and not (self.group is not None and has_version and has_resource),
                "identity hashes can only be used with GVRs",
            ),
            (
                self.origin == "service" and bool(self.sync_status) and self.watch is None,
                "watch must be configured when origin is service and syncStatus is true",
            ),
        ]
        problems = [("", f'Invalid value: "object": {message}') for broken, message in rules if broken]
        if problems:
            raise rule_error(problems)
        return self


# --- the object -----------------------------------------------------------------------------------


class PublishedResourceSpec(APIModel):
    """What to publish and how objects of that type are synced."""

    resource: SourceResource
    """The API type on the service cluster."""
    filter: Filter | None = None
    """Which kcp objects to sync."""
    naming: Naming | None = None
    """How local objects are named."""
    enable_workspace_paths: bool | None = None
    """Also record the kcp workspace path on local objects."""
    projection: Projection | None = None
    """How the type looks in kcp."""
    mutation: MutationSpec | None = None
    """Rewrite rules in both directions."""
    related: list[RelatedResource] | None = None
    """Objects synced along with each primary object."""
    synchronization: Synchronization | None = None
    """Whether objects are synced; absent means enabled."""

    @model_validator(mode="after")
    def _check(self) -> PublishedResourceSpec:
        problems: list[tuple[str, str]] = []
        selected = self.resource.selected_versions
        if self.projection is not None and self.projection.version and len(selected) > 1:
            problems.append(
                ("projection.version", "Forbidden: may only be set when exactly one version is selected")
            )
        seen: set[str] = set()
        for i, related in enumerate(self.related or []):
            if related.identifier in seen:
                problems.append((f"related[{i}].identifier", f'Duplicate value: "{related.identifier}"'))
            seen.add(related.identifier)
        if problems:
            raise rule_error(problems)
        return self


class PublishedResourceStatus(APIModel, extra="ignore"):
    """What syncflow observed: the APIResourceSchema created and conditions."""

    resource_schema_name: str | None = None
    """The name of the APIResourceSchema made from the projected CRD."""
    conditions: list[Condition] | None = None
    """Conditions such as Ready, with a reason and a message a person can act on."""


class PublishedResource(APIModel):
    """Publishes an API type of the service cluster (usually a CRD) into kcp workspaces."""

    api_version: Literal["syncagent.kcp.io/v1alpha1"] = "syncagent.kcp.io/v1alpha1"
    """APIVersion of this object."""
    kind: Literal["PublishedResource"] = "PublishedResource"
    """Kind of this object."""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    """Standard object metadata."""
    spec: PublishedResourceSpec
    """What to publish and how to sync it."""
    status: PublishedResourceStatus | None = None
    """What syncflow observed."""

    @classmethod
    def parse(cls, obj: Mapping[str, Any]) -> PublishedResource:
        """Validate a manifest or API object; raises :class:`PublishedResourceError` listing every problem."""
        return validate_object(cls, obj, PublishedResourceError)

    @property
    def name(self) -> str:
        """``metadata.name`` (empty if unset)."""
        return self.metadata.name or ""

    @property
    def sync_enabled(self) -> bool:
        """Whether objects are synced: true unless ``spec.synchronization.enabled`` is false."""
        sync = self.spec.synchronization
        return sync is None or sync.enabled


API_TYPE = APIType(
    model=PublishedResource,
    group=GROUP,
    version=VERSION,
    kind=KIND,
    plural="publishedresources",
    scope="Cluster",
    printer_columns=(
        {"name": "API Group", "type": "string", "jsonPath": ".spec.resource.apiGroup"},
        {"name": "Kind", "type": "string", "jsonPath": ".spec.resource.kind"},
        {"name": "Schema", "type": "string", "jsonPath": ".status.resourceSchemaName"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ),
)
"""The CRD facts of PublishedResource (api-syncagent's CRD has no short names or categories)."""
