"""Server-side printing: ``meta.k8s.io/v1 Table`` responses, which ``kubectl get`` asks for."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from syncflow.devcluster.resources import ResourceType

Obj = dict[str, Any]
Cell = Callable[[Obj], Any]


def wants_table(accept: str) -> bool:
    """True when the client asked for a Table rendering."""
    return "as=Table" in accept


def human_age(timestamp: str | None, now: datetime | None = None) -> str:
    """Age as kubectl prints it: ``45s``, ``3m12s``, ``5h``, ``2d``; ``<invalid>`` for a non-RFC 3339 time."""
    if not timestamp:
        return "<unknown>"
    try:  # RFC 3339, with or without fractional seconds (status timestamps often have them)
        created = datetime.fromisoformat(timestamp)
    except ValueError:
        return "<invalid>"
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - created).total_seconds()))
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 48:
        return f"{hours}h"
    return f"{hours // 24}d"


_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[\?\(@\.([\w.]+)==[\"']([^\"']*)[\"']\)\]")


def json_path(obj: Any, path: str) -> Any:
    """Evaluate the simple JSONPath forms printer columns use (``.a.b``, ``[0]``, ``[?(@.k=="v")]``)."""
    current: Any = obj
    for match in _SEGMENT.finditer(path.strip("{}")):
        key, index, filter_key, filter_value = match.groups()
        if key is not None:
            current = current.get(key) if isinstance(current, dict) else None
        elif index is not None:
            current = current[int(index)] if isinstance(current, list) and int(index) < len(current) else None
        else:
            candidates = current if isinstance(current, list) else []
            current = next((c for c in candidates if json_path(c, "." + filter_key) == filter_value), None)
        if current is None:
            return None
    return current


def _meta_name(obj: Obj) -> Any:
    return obj["metadata"]["name"]


def _age(obj: Obj) -> Any:
    return human_age(obj["metadata"].get("creationTimestamp"))


def _col(name: str, kind: str = "string", fmt: str = "") -> dict[str, Any]:
    return {"name": name, "type": kind, "format": fmt, "description": name, "priority": 0}


_NAME = (_col("Name", fmt="name"), _meta_name)
_AGE = (_col("Age", "date"), _age)

_BUILTIN_COLUMNS: dict[tuple[str, str], list[tuple[dict[str, Any], Cell]]] = {
    ("", "namespaces"): [_NAME, (_col("Status"), lambda o: o.get("status", {}).get("phase", "")), _AGE],
    ("", "configmaps"): [
        _NAME,
        (_col("Data", "integer"), lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {})),
        _AGE,
    ],
    ("", "secrets"): [
        _NAME,
        (_col("Type"), lambda o: o.get("type", "")),
        (_col("Data", "integer"), lambda o: len(o.get("data") or {})),
        _AGE,
    ],
    ("apps", "deployments"): [
        _NAME,
        (
            _col("Ready"),
            lambda o: f"{o.get('status', {}).get('readyReplicas', 0)}/{o.get('spec', {}).get('replicas', 1)}",
        ),
        (_col("Up-to-date", "integer"), lambda o: o.get("status", {}).get("updatedReplicas", 0)),
        (_col("Available", "integer"), lambda o: o.get("status", {}).get("availableReplicas", 0)),
        _AGE,
    ],
    ("apiextensions.k8s.io", "customresourcedefinitions"): [
        _NAME,
        (_col("Created At", "date"), lambda o: o["metadata"].get("creationTimestamp", "")),
    ],
}


def _custom_columns(rtype: ResourceType, version: str) -> list[tuple[dict[str, Any], Cell]]:
    printer = rtype.printer_columns.get(version) or []
    if not printer:
        return [_NAME, _AGE]
    columns: list[tuple[dict[str, Any], Cell]] = [_NAME]
    for spec in printer:
        path = spec["jsonPath"]
        if spec.get("type") == "date":

            def cell(o: Obj, path: str = path) -> Any:
                return human_age(json_path(o, path))
        else:

            def cell(o: Obj, path: str = path) -> Any:
                return json_path(o, path)

        column = _col(spec["name"], spec.get("type", "string"), spec.get("format", ""))
        column["priority"] = spec.get("priority", 0)
        column["description"] = spec.get("description", spec["name"])
        columns.append((column, cell))
    return columns


def columns_for(rtype: ResourceType, version: str) -> list[tuple[dict[str, Any], Cell]]:
    """Column definitions and cell functions of a resource."""
    if rtype.custom:
        return _custom_columns(rtype, version)
    return _BUILTIN_COLUMNS.get((rtype.group, rtype.plural), [_NAME, _AGE])


def _row_object(obj: Obj, include: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}


def table(
    rtype: ResourceType,
    version: str,
    objects: list[Obj],
    *,
    resource_version: str,
    continue_token: str = "",
    include_object: str = "Metadata",
) -> Obj:
    """A Table of ``objects`` (already presented at ``version``)."""
    columns = columns_for(rtype, version)
    rows = []
    for obj in objects:
        row: Obj = {"cells": [cell(obj) for _, cell in columns]}
        row_object = _row_object(obj, include_object)
        if row_object is not None:
            row["object"] = row_object
        rows.append(row)
    metadata: Obj = {"resourceVersion": resource_version}
    if continue_token:
        metadata["continue"] = continue_token
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": [c for c, _ in columns],
        "rows": rows,
    }
