"""Facts about CRD-like specs (CRDs, APIResourceSchemas, synthesised built-in types)."""

from __future__ import annotations

from typing import Any


def storage_version(versions: list[dict[str, Any]]) -> dict[str, Any]:
    """The version marked ``storage`` (the first one when none is)."""
    return next((v for v in versions if v.get("storage")), versions[0])
