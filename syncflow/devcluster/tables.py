"""The renderings a client asks for with ``Accept: application/json;as=...``: server-side printing
(``meta.k8s.io/v1 Table``, which ``kubectl get`` asks for) and metadata-only lists
(``PartialObjectMetadataList``)."""

from __future__ import annotations

import re
from typing import Any

from syncflow.devcluster.printers import (
    AGE,
    BUILTIN_COLUMNS,
    NAME,
    Column,
    Obj,
    col,
    human_age,
    row_conditions,
)
from syncflow.devcluster.resources import ResourceType


def wants_table(accept: str) -> bool:
    """True when the client asked for a Table rendering."""
    return "as=Table" in accept


def wants_metadata_list(accept: str) -> bool:
    """True when the client asked for a list of the objects' metadata only."""
    return "as=PartialObjectMetadataList" in accept


def _partial(obj: Obj) -> Obj:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}


def metadata_list(objects: list[Obj], metadata: Obj) -> Obj:
    """A ``PartialObjectMetadataList`` of ``objects`` with the list's ``metadata``."""
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "items": [_partial(obj) for obj in objects],
    }


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


def _custom_columns(rtype: ResourceType, version: str) -> list[Column]:
    printer = rtype.printer_columns.get(version) or []
    if not printer:
        return [NAME, AGE]
    columns: list[Column] = [NAME]
    for spec in printer:
        path = spec["jsonPath"]
        if spec.get("type") == "date":

            def cell(o: Obj, path: str = path) -> Any:
                return human_age(json_path(o, path))
        else:

            def cell(o: Obj, path: str = path) -> Any:
                return json_path(o, path)

        column = col(
            spec["name"], spec.get("type", "string"), spec.get("format", ""), spec.get("priority", 0)
        )
        column["description"] = spec.get("description", spec["name"])
        columns.append((column, cell))
    return columns


def columns_for(rtype: ResourceType, version: str) -> list[Column]:
    """Column definitions and cell functions of a resource."""
    if rtype.custom:
        return _custom_columns(rtype, version)
    return BUILTIN_COLUMNS.get((rtype.group, rtype.plural), [NAME, AGE])


def _row_object(obj: Obj, include: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return _partial(obj)


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
        conditions = row_conditions(rtype.group, rtype.plural, obj)
        if conditions:
            row["conditions"] = conditions
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
