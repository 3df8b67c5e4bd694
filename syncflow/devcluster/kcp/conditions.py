"""Condition lists as kcp's controllers keep them: set one condition, summarise several into Ready."""

from __future__ import annotations

from collections.abc import Sequence

from syncflow.devcluster.store import Obj

READY = "Ready"


def keep_transition_times(old: list[Obj], new: list[Obj]) -> list[Obj]:
    """``new`` conditions, keeping the transition time of those whose status did not change."""
    before = {c["type"]: c for c in old}
    kept = []
    for condition in new:
        previous = before.get(condition["type"])
        if previous is not None and previous.get("status") == condition["status"]:
            kept.append({**condition, "lastTransitionTime": previous.get("lastTransitionTime")})
        else:
            kept.append(condition)
    return kept


def upsert(conditions: list[Obj], condition: Obj) -> list[Obj]:
    """``conditions`` with ``condition`` in place of the one of its type (or appended).

    An existing condition that is already ``True`` stays as it is when ``condition`` is ``True`` too,
    so a controller that only knows "healthy" does not overwrite the reason another writer gave.
    """
    out, found = [], False
    for existing in conditions:
        if existing.get("type") != condition["type"]:
            out.append(existing)
            continue
        found = True
        both_true = existing.get("status") == condition["status"] == "True"
        out.append(existing if both_true else condition)
    return out if found else [*out, condition]


def summary(conditions: list[Obj], types: Sequence[str], true_reason: str) -> Obj | None:
    """The ``Ready`` condition summarising ``types`` (kcp's ``conditions.SetSummary``), or None.

    Any ``False`` wins over ``True``, which wins over ``Unknown``; reason and message come from the
    first condition of the winning status in the order of ``types``. Absent types do not count.
    """
    present = [c for t in types for c in conditions if c.get("type") == t]
    for status in ("False", "True", "Unknown"):
        first = next((c for c in present if c.get("status") == status), None)
        if first is None:
            continue
        if status == "True":
            return {"type": READY, "status": "True", "reason": true_reason, "message": ""}
        reason = first.get("reason") or "Unknown"
        return {"type": READY, "status": status, "reason": reason, "message": first.get("message") or ""}
    return None
