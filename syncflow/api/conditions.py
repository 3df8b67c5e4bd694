"""Status conditions (``metav1.Condition``) as plain dicts: set one, keep the others and transition times."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

Obj = dict[str, Any]


def now() -> str:
    """The current time as Kubernetes writes it (RFC 3339, seconds, UTC)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def find(conditions: Iterable[Obj] | None, type: str) -> Obj | None:
    """The condition of ``type``, if present."""
    return next((c for c in conditions or () if c.get("type") == type), None)


def is_true(conditions: Iterable[Obj] | None, type: str) -> bool:
    """Whether the condition of ``type`` is present and True."""
    found = find(conditions, type)
    return found is not None and found.get("status") == "True"


def set_condition(
    conditions: Iterable[Obj] | None,
    type: str,
    ok: bool | None,
    reason: str,
    message: str,
    generation: int | None = None,
) -> list[Obj]:
    """``conditions`` with ``type`` set (last; ``ok`` None: Unknown), keeping its transition time when
    its status did not change."""
    old = list(conditions or ())
    status = "Unknown" if ok is None else "True" if ok else "False"
    previous = find(old, type)
    changed_at = previous["lastTransitionTime"] if previous and previous.get("status") == status else now()
    condition: Obj = {
        "type": type,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": changed_at,
    }
    if generation is not None:
        condition["observedGeneration"] = generation
    return [c for c in old if c.get("type") != type] + [condition]
