"""The EdgeSyncConfigs' status and lifecycle: whether each is valid and applied, where merging overrode
it, what of it is refused, which of its objects are in conflict or parked; syncflow's finalizer on each
while it lives, and the release of what it selected when it is deleted."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from syncflow.api.conditions import set_condition
from syncflow.api.edgesyncconfig import EdgeSyncConfig
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.edge.merge import merge
from syncflow.modes.edge.rules import EDGE_SYNC_CONFIGS, EdgeRules
from syncflow.queue.service import QueueService
from syncflow.sync import owners, trouble
from syncflow.sync.rule import SyncRule
from syncflow.sync.worker import RuleWorker
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.edge")

Obj = dict[str, Any]


def _status(
    obj: Obj, down: int, up: int, conflicts: list[str] | None, refused: list[str] | None, error: str | None
) -> Obj:
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
    conditions = set_condition(
        conditions,
        "Refused",
        bool(refused),
        "OutOfScope" if refused else "NothingRefused",
        "; ".join(refused or []) or "every selector applies",
        generation,
    )
    return {**old, "conditions": conditions, "downSyncedTypes": down, "upSyncedTypes": up}


def _types(config: EdgeSyncConfig) -> set[tuple[str, str]]:
    """The (group, kind) of every type the config selects, in either form of a conversion."""
    spec = config.spec
    refs = [*(spec.down_synced_resources or []), *(spec.up_synced_resources or [])]
    for conversion in spec.conversions or []:
        refs += [conversion.upstream, conversion.downstream]  # type: ignore[list-item]
    return {(ref.group, ref.kind) for ref in refs}


def _rules_of(config: EdgeSyncConfig, rules: list[SyncRule]) -> list[str]:
    types = _types(config)
    return [r.name for r in rules if (r.source.resource.group, r.source.resource.kind) in types]


@dataclass
class EdgeConfigs:
    """Keeps every EdgeSyncConfig's status and lifecycle (the ``edgeconfig`` key)."""

    mailbox: JsonApi
    rules: EdgeRules
    worker: RuleWorker
    service: QueueService

    def record(self) -> int:
        """Release what deleted configs selected, hold syncflow's finalizer on the others and write
        every config's status; returns how many statuses changed."""
        objects = self.mailbox.get(EDGE_SYNC_CONFIGS).get("items") or []
        going = [obj for obj in objects if owners.deleting(obj)]
        if any(owners.holds(obj) for obj in going):
            released = self._release()
            for obj in going:
                owners.let_go(self.mailbox, f"{EDGE_SYNC_CONFIGS}/{obj['metadata']['name']}", obj)
                log_event(logger, "edge.config_released", config=obj["metadata"]["name"], objects=released)
        live = [
            owners.hold(self.mailbox, f"{EDGE_SYNC_CONFIGS}/{obj['metadata']['name']}", obj)
            for obj in objects
            if not owners.deleting(obj)
        ]
        return self._write_status(live)

    def _release(self) -> int:
        """Make the rules what the remaining configs select, now: release every rule they no longer
        want (its copies deleted when deletion propagates) and stop syncing what a narrowed rule no
        longer selects. The watcher publishes the same rules."""
        wanted = self.rules.desired()
        gone = [rule for rule in self.worker.known_rules() if rule.name not in wanted]
        released = self.worker.retire(gone) if gone else 0
        for entry in wanted.values():
            if entry.state == "ready" and entry.rule is not None:
                released += self.worker.release_unselected(entry.rule)
        return released

    def _write_status(self, objects: list[Obj]) -> int:
        valid: dict[str, EdgeSyncConfig] = {}
        errors: dict[str, str] = {}
        for obj in objects:
            try:
                valid[obj["metadata"]["name"]] = EdgeSyncConfig.parse(obj)
            except ValueError as exc:
                errors[obj["metadata"]["name"]] = str(exc)
        merged = merge(list(valid.values()))
        ready = self.worker.registry.ready_rules()
        found = trouble.troubles(self.service, {rule.name for rule in ready})
        changed = 0
        for obj in objects:
            name = obj["metadata"]["name"]
            status = _status(
                obj,
                len(merged.down),
                len(merged.up),
                merged.conflicts.get(name),
                merged.refused.get(name),
                errors.get(name),
            )
            if name in valid:
                mine = trouble.total(found, _rules_of(valid[name], ready))
                generation = int(obj["metadata"].get("generation", 0))
                status["conditions"] = trouble.conditions(status.get("conditions"), mine, generation)
            if status != (obj.get("status") or {}):
                patch = {
                    "metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]},
                    "status": status,
                }
                self.mailbox.merge_patch(f"{EDGE_SYNC_CONFIGS}/{name}/status", patch)
                changed += 1
        return changed
