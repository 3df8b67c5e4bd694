"""Turning pydantic validation errors into kubectl-like ``field.path: reason`` problems."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from syncflow.api.meta import RULES_ERROR

M = TypeVar("M", bound=BaseModel)

_JSON_TYPES = {
    "string_type": "string",
    "bool_type": "boolean",
    "int_type": "integer",
    "float_type": "number",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
}


class APIValidationError(ValueError):
    """An API object failed validation; ``problems`` holds one ``field.path: reason`` per problem."""

    def __init__(self, kind: str, name: str | None, problems: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.problems = problems
        shown = f'{kind} "{name}"' if name else kind
        super().__init__(f"The {shown} is invalid:\n" + "\n".join(f"* {p}" for p in problems))


def field_path(loc: tuple[int | str, ...]) -> str:
    """``("spec", "related", 0, "origin")`` → ``spec.related[0].origin``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def _join(base: str, rel: str) -> str:
    if not rel:
        return base
    if not base:
        return rel
    return base + (rel if rel.startswith("[") else "." + rel)


def _json_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null" if value is None else "object"


def _reason(error: Mapping[str, Any]) -> str:
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if kind == "missing":
        return "Required value"
    if kind == "extra_forbidden":
        return "Forbidden: unknown field"
    if kind == "literal_error":
        allowed = ", ".join(f'"{v}"' for v in re.findall(r"'([^']*)'", str(ctx.get("expected", ""))))
        return f"Unsupported value: {json.dumps(value)}: supported values: {allowed}"
    if kind in _JSON_TYPES:
        return f'Invalid value: "{_json_name(value)}": must be of type {_JSON_TYPES[kind]}'
    return f"Invalid value: {json.dumps(value, default=str)}: {error['msg']}"


def problems(exc: ValidationError) -> list[str]:
    """One ``field.path: reason`` line per error, in pydantic's order."""
    lines: list[str] = []
    for error in exc.errors():
        base = field_path(error["loc"])
        if error["type"] == RULES_ERROR:
            lines.extend(f"{_join(base, rel)}: {reason}" for rel, reason in error["ctx"]["problems"])
        else:
            lines.append(f"{base}: {_reason(error)}" if base else _reason(error))
    return lines


def validate_object(model: type[M], obj: Mapping[str, Any], error: type[APIValidationError]) -> M:
    """Validate ``obj`` as ``model``, raising ``error`` (kind from the model name) with every problem."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        raise error(model.__name__, name if isinstance(name, str) else None, problems(exc)) from None
