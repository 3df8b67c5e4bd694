"""The EdgeSyncConfigs' status: whether each is valid and applied, and where merging overrode it."""

from __future__ import annotations

from typing import Any

from syncflow.api.conditions import set_condition
from syncflow.api.edgesyncconfig import EdgeSyncConfig
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.edge.merge import merge
from syncflow.modes.edge.rules import EDGE_SYNC_CONFIGS

Obj = dict[str, Any]


def _status(obj: Obj, down: int, up: int, conflicts: list[str] | None, error: str | None) -> Obj:
    old = obj.get("status") or {}
    generation = int(obj["metadata"].get("generation", 0))
    conditions = old.get("conditions")
    if error is not None:
        conditions = set_condition(conditions, "Ready", False, "InvalidSpec", error[:4096], generation)
        return {**old, "conditions": conditions}
    conditions = set_condition(
        conditions, "Ready", True, "Merged", "applied with every other EdgeSyncConfig", generation
    )
    conditions = set_condition(
        conditions,
        "Conflict",
        bool(conflicts),
        "Overridden" if conflicts else "NoConflict",
        "; ".join(conflicts or []) or "no other EdgeSyncConfig disagrees with this one",
        generation,
    )
    return {**old, "conditions": conditions, "downSyncedTypes": down, "upSyncedTypes": up}


def record(mailbox: JsonApi) -> int:
    """Write every EdgeSyncConfig's status; returns how many changed."""
    objects = mailbox.get(EDGE_SYNC_CONFIGS).get("items") or []
    valid: dict[str, EdgeSyncConfig] = {}
    errors: dict[str, str] = {}
    for obj in objects:
        try:
            valid[obj["metadata"]["name"]] = EdgeSyncConfig.parse(obj)
        except ValueError as exc:
            errors[obj["metadata"]["name"]] = str(exc)
    merged = merge(list(valid.values()))
    changed = 0
    for obj in objects:
        name = obj["metadata"]["name"]
        status = _status(obj, len(merged.down), len(merged.up), merged.conflicts.get(name), errors.get(name))
        if status != (obj.get("status") or {}):
            patch = {"metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]}, "status": status}
            mailbox.merge_patch(f"{EDGE_SYNC_CONFIGS}/{name}/status", patch)
            changed += 1
    return changed
