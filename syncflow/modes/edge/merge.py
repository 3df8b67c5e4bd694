"""All EdgeSyncConfigs of a mailbox workspace merged into one configuration (pure functions).

Merge rules (deterministic, documented in docs/edge.md):
- selectors: the union — an object is downsynced (upsynced) when any config selects it; each downsync
  selector keeps its config's ``propagateDeletion`` and ``returnReportedState``, which apply to the
  objects it selects only (the rules decide per object, see ``syncflow.modes.edge.rules``);
- an upsync selector naming CustomResourceDefinition is refused (CRD upsync is out of scope);
- conversions: the union; two conversions of one upstream object to different downstream objects (or of
  two upstream objects to one downstream object) conflict, and the one of the config whose name sorts
  first wins.
Every config whose conversion lost gets a ``Conflict`` condition naming the config that won, and every
config with a refused selector a ``Refused`` condition saying which.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from syncflow.api.edgesyncconfig import Conversion, EdgeSyncConfig, ObjectRef, ResourceSelector

TypeKey = tuple[str, str, str]
"""(group, version, kind)."""
CRD_GROUP_KIND = ("apiextensions.k8s.io", "CustomResourceDefinition")


def type_of(selector: ResourceSelector | ObjectRef) -> TypeKey:
    """The (group, version, kind) a selector or object reference is about."""
    return selector.group, selector.version, selector.kind


@dataclass(frozen=True)
class Selection:
    """A downsync selector with the switches of the config it is in."""

    selector: ResourceSelector
    propagate_deletion: bool
    return_reported_state: bool


@dataclass
class Merged:
    """The effective configuration of a mailbox workspace."""

    down: dict[TypeKey, list[Selection]] = field(default_factory=lambda: defaultdict(list))
    up: dict[TypeKey, list[ResourceSelector]] = field(default_factory=lambda: defaultdict(list))
    conversions: list[Conversion] = field(default_factory=list)
    conflicts: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    """Config name → why part of it lost."""
    refused: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    """Config name → what of it is refused."""


def _ref_key(ref: ObjectRef) -> tuple[str, str, str]:
    return ref.group, ref.kind, ref.name


def merge(configs: list[EdgeSyncConfig]) -> Merged:
    """Merge ``configs`` (any order: they are taken by name)."""
    merged = Merged()
    ordered = sorted(configs, key=lambda c: c.metadata.name or "")
    for config in ordered:
        spec, name = config.spec, config.metadata.name or ""
        for selector in spec.down_synced_resources or []:
            selection = Selection(selector, spec.propagate_deletion, spec.return_reported_state)
            merged.down[type_of(selector)].append(selection)
        for index, selector in enumerate(spec.up_synced_resources or []):
            if (selector.group, selector.kind) == CRD_GROUP_KIND:
                merged.refused[name].append(
                    f"upSyncedResources[{index}]: CustomResourceDefinitions are never upsynced"
                )
                continue
            merged.up[type_of(selector)].append(selector)
    up_taken: dict[tuple[str, str, str], tuple[str, Conversion]] = {}
    down_taken: dict[tuple[str, str, str], tuple[str, Conversion]] = {}
    for config in ordered:
        name = config.metadata.name or ""
        for conversion in config.spec.conversions or []:
            up, down = _ref_key(conversion.upstream), _ref_key(conversion.downstream)
            clash = up_taken.get(up) or down_taken.get(down)
            if clash is not None:
                if clash[1] != conversion:
                    merged.conflicts[name].append(
                        f"conversion of {conversion.upstream.kind} {conversion.upstream.name}: the one in "
                        f"{clash[0]} wins"
                    )
                continue
            up_taken[up] = down_taken[down] = (name, conversion)
            merged.conversions.append(conversion)
    return merged
