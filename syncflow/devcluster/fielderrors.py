"""Constructors for :class:`FieldError` that word causes as apimachinery's ``field.Error`` does."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from syncflow.devcluster.errors import FieldError


def format_value(value: Any) -> str:
    """A bad value as kube-apiserver prints it: strings quoted, numbers bare, ``null`` quoted."""
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _with_detail(head: str, detail: str) -> str:
    return f"{head}: {detail}" if detail else head


def required(field: str, detail: str = "") -> FieldError:
    """``Required value``."""
    return FieldError(field, "FieldValueRequired", _with_detail("Required value", detail))


def invalid(field: str, value: Any, detail: str) -> FieldError:
    """``Invalid value: "x": detail``."""
    return FieldError(
        field, "FieldValueInvalid", _with_detail(f"Invalid value: {format_value(value)}", detail)
    )


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    """A value of the wrong type; kube prints it as ``Invalid value``."""
    head = f"Invalid value: {format_value(value)}"
    return FieldError(field, "FieldValueTypeInvalid", _with_detail(head, detail))


def not_supported(field: str, value: Any, supported: Iterable[str]) -> FieldError:
    """``Unsupported value: "x": supported values: "a", "b"``."""
    detail = ", ".join(json.dumps(s, ensure_ascii=False) for s in supported)
    head = f"Unsupported value: {format_value(value)}"
    return FieldError(
        field, "FieldValueNotSupported", _with_detail(head, detail and "supported values: " + detail)
    )


def forbidden(field: str, detail: str) -> FieldError:
    """``Forbidden: detail``."""
    return FieldError(field, "FieldValueForbidden", _with_detail("Forbidden", detail))


def too_long(field: str, max_length: int) -> FieldError:
    """``Too long: may not be more than N bytes`` (the value is omitted, as kube does)."""
    unit = "byte" if max_length == 1 else "bytes"
    return FieldError(field, "FieldValueTooLong", f"Too long: may not be more than {max_length} {unit}")


def too_many(field: str, actual: int, maximum: int) -> FieldError:
    """``Too many: 4: must have at most 3 items``."""
    unit = "item" if maximum == 1 else "items"
    return FieldError(field, "FieldValueTooMany", f"Too many: {actual}: must have at most {maximum} {unit}")


def duplicate(field: str, value: Any) -> FieldError:
    """``Duplicate value: "x"``."""
    return FieldError(field, "FieldValueDuplicate", f"Duplicate value: {format_value(value)}")
