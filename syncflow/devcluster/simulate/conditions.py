"""Status conditions that keep their timestamps while they do not change (so reconciles converge)."""

from __future__ import annotations

from syncflow.devcluster.crud import now_rfc3339
from syncflow.devcluster.store import Obj


def set_condition(
    conditions: list[Obj], kind: str, status: str, reason: str, message: str, *, update_time: bool = False
) -> list[Obj]:
    """``conditions`` with the ``kind`` one set; its times move only when status or reason change.

    ``update_time`` adds ``lastUpdateTime`` (Deployment conditions have it).
    """
    old = next((c for c in conditions if c.get("type") == kind), None)
    now = now_rfc3339()
    unchanged = old is not None and old.get("status") == status and old.get("reason") == reason
    condition: Obj = {"type": kind, "status": status}
    if update_time:
        condition["lastUpdateTime"] = old.get("lastUpdateTime", now) if unchanged and old else now
    condition["lastTransitionTime"] = (
        old.get("lastTransitionTime", now) if old is not None and old.get("status") == status else now
    )
    condition["reason"] = reason
    condition["message"] = message
    if old is None:
        return [*conditions, condition]
    return [condition if c is old else c for c in conditions]


def is_true(obj: Obj, kind: str) -> bool:
    """The object's ``kind`` status condition is True."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)
