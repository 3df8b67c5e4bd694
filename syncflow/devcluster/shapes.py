"""What server-side apply needs to know of a type's schema: which lists merge, and how.

A :class:`Shape` describes one node of an object: for a list, whether it is ``atomic`` (replaced
whole), a ``set`` of primitives, or an associative ``map`` list keyed by some fields; and the shapes
of its fields or items. Built-in kinds take this from the strategic-merge metadata in
:mod:`syncflow.devcluster.patch` (a ``patchMergeKey`` makes a keyed list, ``patchStrategy: merge``
without key a set, every other list is atomic); custom resources from their CRD's
``x-kubernetes-list-type`` / ``x-kubernetes-list-map-keys`` (lists default to atomic, as in kube).
Object metadata always follows ObjectMeta's rules (finalizers a set, ownerReferences keyed by uid).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from syncflow.devcluster import patch
from syncflow.devcluster.resources import ResourceType

ATOMIC, SET, MAP = "atomic", "set", "map"
_NO_STRATEGIES = patch.PatchSchema()  # shared: built once, not per field of every write


class Shape(Protocol):
    """One node of an object's schema, as apply sees it."""

    @property
    def list_type(self) -> str:
        """``atomic``, ``set`` or ``map`` (for a list node)."""

    @property
    def keys(self) -> tuple[str, ...]:
        """The key fields of a ``map`` list."""

    def field(self, name: str) -> Shape:
        """The shape of a map or struct field."""

    def item(self) -> Shape:
        """The shape of a list's elements."""


@dataclass(frozen=True)
class PatchShape:
    """A node described by strategic-merge metadata (built-in kinds)."""

    schema: patch.PatchSchema
    strategy: patch.FieldStrategy | None = None

    @property
    def list_type(self) -> str:
        """Keyed, set or atomic, from patchStrategy/patchMergeKey."""
        if self.strategy is None or not self.strategy.merge:
            return ATOMIC
        return MAP if self.strategy.merge_key else SET

    @property
    def keys(self) -> tuple[str, ...]:
        """The merge key of a keyed list."""
        return (self.strategy.merge_key,) if self.strategy and self.strategy.merge_key else ()

    def field(self, name: str) -> Shape:
        """The shape of ``name``, carrying its list strategy."""
        strategy = self.schema.strategy(name)
        return PatchShape(strategy.schema or _NO_STRATEGIES, strategy)

    def item(self) -> Shape:
        """List elements are described by the strategy's schema."""
        return PatchShape(self.schema)


@dataclass(frozen=True)
class OpenAPIShape:
    """A node of a CRD's structural schema."""

    node: Mapping[str, Any] = field(default_factory=dict)

    @property
    def list_type(self) -> str:
        """``x-kubernetes-list-type`` (atomic when absent)."""
        return str(self.node.get("x-kubernetes-list-type") or ATOMIC)

    @property
    def keys(self) -> tuple[str, ...]:
        """``x-kubernetes-list-map-keys``."""
        return tuple(self.node.get("x-kubernetes-list-map-keys") or ())

    def field(self, name: str) -> Shape:
        """A property, or the additionalProperties schema, or an unknown node."""
        properties = self.node.get("properties") or {}
        if name in properties:
            return OpenAPIShape(properties[name])
        extra = self.node.get("additionalProperties")
        return OpenAPIShape(extra if isinstance(extra, Mapping) else {})

    def item(self) -> Shape:
        """The ``items`` schema."""
        items = self.node.get("items")
        return OpenAPIShape(items if isinstance(items, Mapping) else {})


def _object_meta() -> patch.PatchSchema:
    """ObjectMeta's rules, as every built-in kind's strategic-merge schema carries them."""
    schema = patch.builtin_patch_schema("", "ConfigMap")
    assert schema is not None
    return schema


_OBJECT_META = _object_meta()


@dataclass(frozen=True)
class ObjectShape:
    """A whole object: ObjectMeta rules for ``metadata``, the type's own shape for the rest."""

    body: Shape
    list_type: str = ATOMIC
    keys: tuple[str, ...] = ()

    def field(self, name: str) -> Shape:
        """``metadata`` or a top-level field of the type."""
        if name == "metadata":
            return PatchShape(_OBJECT_META).field("metadata")
        return self.body.field(name)

    def item(self) -> Shape:
        """An object is not a list."""
        return self.body.item()


def shape_of(rtype: ResourceType, version: str) -> Shape:
    """The apply shape of a type at a version."""
    if rtype.custom:
        return ObjectShape(OpenAPIShape(rtype.schemas.get(version) or {}))
    builtin = patch.builtin_patch_schema(rtype.group, rtype.kind)
    return ObjectShape(PatchShape(builtin) if builtin is not None else OpenAPIShape())
