"""gjson's ``Result`` for a value found at a path: what the regex mutation coalesces to a string and
what template mutations see as ``.Value`` (``.Value.String``, ``.Value.Int``, ``.Value.Raw`` ...)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from syncflow.gocompat import gojson
from syncflow.mutation import paths
from syncflow.templating import Method, Struct

_TYPES = {type(None): "Null", bool: "Bool", int: "Number", float: "Number", str: "String"}


def raw(value: Any) -> str:
    """The JSON text of ``value`` as api-syncagent's ``json.Marshal`` wrote the object."""
    return gojson.encode(value)


def _float_text(number: float) -> str:
    """``strconv.FormatFloat(f, 'f', -1, 64)``."""
    text = format(Decimal(repr(number)), "f")
    return text[:-2] if text.endswith(".0") else text


def string(found: bool, value: Any) -> str:
    """``Result.String()``: "" for missing and null, digits as written, the raw JSON of objects."""
    if not found or value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value) if math.isfinite(value) else ""
    if isinstance(value, str):
        return value
    return raw(value)


def _int(found: bool, value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else 0
    if isinstance(value, str):
        try:
            return int(float(value)) if value.strip() == value else 0
        except ValueError:
            return 0
    return 0


def _float(found: bool, value: Any) -> float:
    if isinstance(value, bool | int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return 0.0
    return 0.0


def _bool(found: bool, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str):
        return value in ("1", "t", "T", "TRUE", "true", "True")
    return False


def go_value(value: Any) -> Any:
    """``Result.Value()``: numbers are float64, as Go decodes JSON into ``any``."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, Mapping):
        return {k: go_value(v) for k, v in value.items()}
    return [go_value(v) for v in value]


def result(found: bool, value: Any) -> Struct:
    """The ``gjson.Result`` as template data: fields ``Type``, ``Raw``, ``Str``, ``Num`` and methods."""
    kind = _TYPES.get(type(value), "JSON") if found else "Null"
    if isinstance(value, bool):
        kind = "True" if value else "False"

    def get(path: str) -> Struct:
        return result(*paths.get(value, paths.parse(path)))

    def items() -> list[Struct]:
        if isinstance(value, list):
            return [result(True, v) for v in value]
        return [] if not found or value is None else [result(True, value)]

    return Struct(
        Type=kind,
        Raw=raw(value) if found else "",
        Str=value if isinstance(value, str) else "",
        Num=float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0,
        String=Method(lambda: string(found, value)),
        Int=Method(lambda: _int(found, value)),
        Float=Method(lambda: _float(found, value)),
        Bool=Method(lambda: _bool(found, value)),
        Exists=Method(lambda: found),
        Value=Method(lambda: go_value(value) if found else None),
        IsObject=Method(lambda: isinstance(value, Mapping)),
        IsArray=Method(lambda: isinstance(value, list)),
        IsBool=Method(lambda: isinstance(value, bool)),
        Array=Method(items),
        Get=Method(get),
    )
