"""Sync rules: the engine's only input. Each mode turns its API objects into these
(docs/architecture.md §1, §9).

A rule says which objects of a *source* endpoint map to which objects of a *target* endpoint, and
which directions are on. For spec-down sync the source is upstream (kcp) and the target downstream
(a cluster); an upsync rule (edge mode) has them the other way round. Rules are plain data (a
pydantic model), so the watcher can publish them in the rule registry and every worker reads the
same rule back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from syncflow.kube.jsonapi import resource_path
from syncflow.sync.metadata import CLEANUP_FINALIZER


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Resource(_Frozen):
    """One side's resource: where its objects live and what they look like."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    status_subresource: bool = False

    @property
    def api_version(self) -> str:
        """``group/version`` (``version`` for the core group)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``plural.group`` (``plural`` for the core group)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str = "", name: str = "") -> str:
        """The collection (``name`` empty) or object path; all namespaces when ``namespace`` is empty."""
        return resource_path(
            self.group, self.version, self.plural, namespace if self.namespaced else "", name
        )


class Side(_Frozen):
    """A resource on an endpoint (an endpoint name the mode's ``Endpoints`` resolves).

    ``cluster`` fixes the logical cluster of every object on this side (a plain cluster, or one
    kcp workspace); None means each object's own cluster (the APIExport virtual workspace).
    """

    endpoint: str
    resource: Resource
    cluster: str | None = None


class SelectorTerm(_Frozen):
    """One conjunction of conditions on a source object; empty fields match everything.

    ``labels``/``annotations`` are label-selector expressions (kube syntax) over the object's labels
    and annotations; ``fields`` a field selector evaluated on the object (e.g.
    ``type!=kubernetes.io/service-account-token``); ``namespace_labels`` a selector over the labels of
    the source Namespace of a namespaced object.
    """

    labels: str = ""
    annotations: str = ""
    fields: str = ""
    namespaces: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    namespace_labels: str = ""


class Selector(SelectorTerm):
    """Which source objects a rule syncs: its own conditions, and (when ``any_of`` is not empty) at least
    one of ``any_of``'s; never the objects named in ``exclude_names``."""

    any_of: tuple[SelectorTerm, ...] = ()
    exclude_names: tuple[str, ...] = ()

    @property
    def server_labels(self) -> str:
        """A label selector that every object the rule selects matches, for a list to send to the API
        server: the rule's own ``labels`` and those of its only ``any_of`` term (with several terms,
        theirs are applied after listing); the rest of the selector is applied after listing too."""
        only = self.any_of[0].labels if len(self.any_of) == 1 else ""
        return ",".join(labels for labels in (self.labels, only) if labels)


class NamingPlacement(_Frozen):
    """Target namespace and name from Go templates (publish mode's ``spec.naming``)."""

    kind: Literal["naming"] = "naming"
    namespace: str | None = None
    name: str | None = None


class NamespaceMapping(_Frozen):
    """Same name; each (cluster, namespace) of the source gets its own target namespace
    ``<prefix><hash>`` with a locator annotation pointing back (the TMC syncer's mapping)."""

    kind: Literal["namespace-mapping"] = "namespace-mapping"
    prefix: str = "kcp-"
    locator_annotation: str = "kcp.io/namespace-locator"
    locator: dict[str, Any] = Field(default_factory=dict)
    """Fixed locator fields (e.g. the sync target); ``cluster`` and ``namespace`` are added per object."""


class IdentityPlacement(_Frozen):
    """Same namespace and name on the target; ``names`` renames individual objects (renaturing)."""

    kind: Literal["identity"] = "identity"
    names: dict[str, str] = Field(default_factory=dict)


Placement = Annotated[NamingPlacement | NamespaceMapping | IdentityPlacement, Field(discriminator="kind")]


class DropFields(_Frozen):
    """Remove fields from the target object (dotted paths; ``[]`` steps into every list item)."""

    kind: Literal["drop-fields"] = "drop-fields"
    paths: tuple[str, ...]


class DropAnnotations(_Frozen):
    """Do not copy annotations whose key starts with one of ``prefixes``."""

    kind: Literal["drop-annotations"] = "drop-annotations"
    prefixes: tuple[str, ...]


class Annotate(_Frozen):
    """Set fixed annotations on the target object; ``timestamp`` names one set to the write time."""

    kind: Literal["annotate"] = "annotate"
    annotations: dict[str, str] = Field(default_factory=dict)
    timestamp: str | None = None


class SetFields(_Frozen):
    """Set fields (dotted paths) on the source object named ``name`` (e.g. a renamed CRD's ``spec.group``)."""

    kind: Literal["set-fields"] = "set-fields"
    name: str
    fields: dict[str, Any]


class Mutate(_Frozen):
    """api-syncagent's ``mutation``: ``spec`` steps rewrite the source object before the copy is built
    from it (the result is also what the last-applied state records); ``status`` steps rewrite the
    copy before its status returns to the source. Steps in their manifest form, e.g.
    ``{"regex": {"path": "spec.secretName", "pattern": "(.+)", "replacement": "cert-$1"}}``."""

    kind: Literal["mutate"] = "mutate"
    spec: tuple[dict[str, Any], ...] = ()
    status: tuple[dict[str, Any], ...] = ()


Transform = Annotated[
    DropFields | DropAnnotations | Annotate | SetFields | Mutate, Field(discriminator="kind")
]


class RegexRewrite(_Frozen):
    """A Go (RE2) regular-expression replacement (``$1``, ``${name}``); an empty pattern gives the
    replacement itself."""

    pattern: str = ""
    replacement: str = ""


class Rewrite(_Frozen):
    """How a name found by a selector becomes the destination's: ``regex``, or a Go ``template`` over
    ``.Value``, ``.RelatedObject``, ``.LocalObject``, ``.RemoteObject``, ``.ClusterName`` and
    ``.ClusterPath``."""

    regex: RegexRewrite | None = None
    template: str | None = None


class RelatedSelector(_Frozen):
    """Objects (or namespaces) selected by labels on the origin side. ``match_labels`` keys and values
    may be Go templates over ``.LocalObject``, ``.RemoteObject``, ``.ClusterName``, ``.ClusterPath`` (an
    empty key is dropped); ``match_expressions`` is kube selector syntax; ``rewrite`` names the copy."""

    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: str = ""
    rewrite: Rewrite


class Locator(_Frozen):
    """Where related objects, or their namespaces, are: exactly one of ``reference`` (a path in the
    primary object, read on both sides, each value optionally rewritten by ``regex``), ``selector``
    or ``template`` (a Go template over ``.Side``, ``.Object``, ``.ClusterName``, ``.ClusterPath``
    rendered on both sides; empty means "not yet")."""

    reference: str | None = None
    regex: RegexRewrite | None = None
    selector: RelatedSelector | None = None
    template: str | None = None


class RelatedWatch(_Frozen):
    """How a change of an origin object finds its primaries besides the related index: ``by_owner``
    (an owner reference of the primary's kind on that side) or ``by_selector`` (every primary on the
    origin side that matches this label selector)."""

    by_owner: bool = False
    by_selector: str | None = None


class Related(_Frozen):
    """Objects that belong to each primary object (e.g. the Secret of a Certificate), synced from their
    ``origin`` side (the rule's ``source`` or ``target``) to the other side under the same rule.

    ``destination_resource`` is the origin resource after projection. Copies carry no sync metadata;
    they are named by ``object`` and ``namespace`` (default: the primary's namespace on each side).
    Origin objects on the rule's source side hold the rule's finalizer. When the primary goes, copies
    are deleted if ``cleanup`` is set or the origin is the source side. ``mutation`` holds spec
    mutation steps (manifest form); ``sync_status`` carries the status along with the object.
    """

    identifier: str
    origin: Literal["source", "target"]
    origin_resource: Resource
    destination_resource: Resource
    object: Locator
    namespace: Locator | None = None
    cleanup: bool = False
    sync_status: bool = False
    mutation: tuple[dict[str, Any], ...] = ()
    watch: RelatedWatch | None = None


class SyncRule(_Frozen):
    """Which source objects map to which target objects, and how (docs/architecture.md §9).

    Directions: ``spec`` copies the source object to the target; ``status`` is ``return`` (the
    target's status flows back to the source, spec-down sync), ``carry`` (the source's status goes
    with the object, upsync) or ``none``. ``deletion`` says what a source deletion does to the
    copy: ``propagate`` deletes it first, ``orphan`` leaves it marked. ``unmatched`` says what happens
    to the copy of an object that stops matching the selector. ``finalizer`` is held on source
    objects while they have a copy (None: deletions are found by a confirmed GET instead).
    ``state_namespace`` is the target namespace of the last-applied state Secrets (None: no state;
    every update replaces the managed fields). ``adopt`` says what happens to a target object of the
    copy's name that syncflow did not make: ``refuse`` to touch it (the key parks with a conflict, the
    default), ``merge`` it into a copy (namespaced objects only; publish mode's adoption), or ``never``
    touch it and say nothing (e.g. a cluster's own CRDs). ``release`` says what the rule's copies
    become when the rule goes away (its config deleted, its type deselected): ``keep`` them, or
    ``delete`` them; the finalizers are released either way. ``previous_finalizers`` are finalizers
    earlier versions held for the rule: replaced by ``finalizer`` on the next sync, released like it.
    ``watch_source`` False means the source is polled. ``related`` objects of each source object are
    synced by ``related`` keys of their own. ``drift`` says what becomes of a target-side edit of a field
    the source sets: ``keep`` it until the source changes that field (api-syncagent's three-way merge),
    or ``revert`` it (the TMC syncer's forced apply): a change of a copy's content, not of its status,
    syncs its source object again, and every sync and resync restores the fields the source sets.

    Per object: with status ``return``, ``status_for`` (when set) limits the objects whose status
    returns to those it selects. The source objects ``keep`` selects keep their copy whatever
    ``deletion``, ``unmatched`` and ``release`` say; their copy is annotated ``syncflow.kcp.io/keep``
    on every sync (and the annotation removed once ``keep`` no longer selects it), so the choice still
    holds after the source object is gone or deselected. Neither reads namespace labels.
    """

    name: str
    agent: str
    source: Side
    target: Side
    selector: Selector = Selector()
    placement: Placement = IdentityPlacement()
    transforms: tuple[Transform, ...] = ()
    spec: bool = True
    status: Literal["return", "carry", "none"] = "return"
    deletion: Literal["propagate", "orphan"] = "propagate"
    unmatched: Literal["keep", "delete"] = "keep"
    finalizer: str | None = CLEANUP_FINALIZER
    previous_finalizers: tuple[str, ...] = ()
    state_namespace: str | None = None
    adopt: Literal["refuse", "merge", "never"] = "refuse"
    release: Literal["keep", "delete"] = "keep"
    keep: Selector | None = None
    status_for: Selector | None = None
    workspace_paths: bool = False
    watch_source: bool = True
    related: tuple[Related, ...] = ()
    drift: Literal["keep", "revert"] = "keep"

    @property
    def finalizers(self) -> tuple[str, ...]:
        """Every finalizer the rule holds or held on source objects (``finalizer`` first)."""
        current = (self.finalizer,) if self.finalizer is not None else ()
        return (*current, *self.previous_finalizers)

    def holds(self, obj: Mapping[str, Any]) -> bool:
        """Whether source object ``obj`` carries one of the rule's finalizers."""
        held = (obj.get("metadata") or {}).get("finalizers") or ()
        return any(finalizer in held for finalizer in self.finalizers)
