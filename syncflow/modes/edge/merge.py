"""All EdgeSyncConfigs of a mailbox workspace merged into one configuration (pure functions).

Merge rules (deterministic, documented in docs/edge.md):
- selectors: the union — an object is downsynced (upsynced) when any config selects it;
- ``propagateDeletion``: false wins (an object one config wants kept downstream is never deleted);
- ``returnReportedState``: true wins (returning status never changes the p-cluster);
- conversions: the union; two conversions of one upstream object to different downstream objects (or of
  two upstream objects to one downstream object) conflict, and the one of the config whose name sorts
  first wins.
Every config whose choice lost gets a ``Conflict`` condition naming the config that won.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from syncflow.api.edgesyncconfig import Conversion, EdgeSyncConfig, ObjectRef, ResourceSelector

TypeKey = tuple[str, str, str]
"""(group, version, kind)."""


def type_of(selector: ResourceSelector | ObjectRef) -> TypeKey:
    """The (group, version, kind) a selector or object reference is about."""
    return selector.group, selector.version, selector.kind


@dataclass
class Merged:
    """The effective configuration of a mailbox workspace."""

    down: dict[TypeKey, list[ResourceSelector]] = field(default_factory=lambda: defaultdict(list))
    up: dict[TypeKey, list[ResourceSelector]] = field(default_factory=lambda: defaultdict(list))
    conversions: list[Conversion] = field(default_factory=list)
    return_reported_state: bool = True
    propagate_deletion: bool = True
    conflicts: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    """Config name → why part of it lost."""


def _ref_key(ref: ObjectRef) -> tuple[str, str, str]:
    return ref.group, ref.kind, ref.name


def merge(configs: list[EdgeSyncConfig]) -> Merged:
    """Merge ``configs`` (any order: they are taken by name)."""
    merged = Merged()
    ordered = sorted(configs, key=lambda c: c.metadata.name or "")
    if not ordered:
        return merged
    names = [c.metadata.name or "" for c in ordered]
    for config in ordered:
        for selector in config.spec.down_synced_resources or []:
            merged.down[type_of(selector)].append(selector)
        for selector in config.spec.up_synced_resources or []:
            merged.up[type_of(selector)].append(selector)
    merged.propagate_deletion = all(c.spec.propagate_deletion for c in ordered)
    merged.return_reported_state = any(c.spec.return_reported_state for c in ordered)
    for config, name in zip(ordered, names, strict=True):
        if config.spec.propagate_deletion != merged.propagate_deletion:
            winner = next(n for c, n in zip(ordered, names, strict=True) if not c.spec.propagate_deletion)
            merged.conflicts[name].append(f"propagateDeletion: false in {winner} wins")
        if config.spec.return_reported_state != merged.return_reported_state:
            winner = next(n for c, n in zip(ordered, names, strict=True) if c.spec.return_reported_state)
            merged.conflicts[name].append(f"returnReportedState: true in {winner} wins")
    up_taken: dict[tuple[str, str, str], tuple[str, Conversion]] = {}
    down_taken: dict[tuple[str, str, str], tuple[str, Conversion]] = {}
    for config, name in zip(ordered, names, strict=True):
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
