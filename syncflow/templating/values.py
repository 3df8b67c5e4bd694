"""Go's view of template data: JSON-like Python values seen as Go's ``map[string]any``, ``[]any``, ``string``,
``int``, ``float64``, ``bool`` and ``nil``, with Go's names, truth and ``%v`` printing."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any


class Struct(dict[str, Any]):
    """Template data whose unknown fields are errors, as a Go struct's are (a map's give ``<no value>``)."""


@dataclass(frozen=True)
class Method:
    """A Go method on a :class:`Struct`: ``.Value.String`` calls it, with any arguments of the command."""

    impl: Callable[..., Any]


class _Missing:
    """The value of a missing map key: Go's invalid ``reflect.Value``."""

    def __repr__(self) -> str:
        return "<no value>"


MISSING = _Missing()


def is_int(value: Any) -> bool:
    """Whether ``value`` is a Go integer (``bool`` is not)."""
    return type(value) is int


def is_nil(value: Any) -> bool:
    """Go's nil or "no value"."""
    return value is None or value is MISSING


def go_type(value: Any) -> str:
    """The Go type name of ``value``, as Go's messages print it."""
    if value is None or value is MISSING:
        return "nil"
    if isinstance(value, Struct):
        return "struct"
    if isinstance(value, Mapping):
        return "map[string]interface {}"
    if isinstance(value, list | tuple):
        return "[]interface {}"
    names = {bool: "bool", int: "int", float: "float64", str: "string", bytes: "[]uint8"}
    return names.get(type(value), type(value).__name__)


def truth(value: Any) -> bool:
    """Go's truth: false, 0, nil, no value and empty strings, lists and maps are false."""
    if value is None or value is MISSING:
        return False
    if isinstance(value, str | bytes | list | tuple | Mapping):
        return len(value) > 0
    return bool(value) if isinstance(value, int | float) else True


def go_float(value: float, exponent_at: int = 6) -> str:
    """The shortest digits of a float64 as Go's ``%v`` (``strconv`` 'g', -1): exponent form when the decimal
    exponent is below -4 or at least ``exponent_at`` (6; ``encoding/json`` uses 21 and ``e-7`` style)."""
    if math.isinf(value) or math.isnan(value):
        return "NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"
    number = Decimal(repr(value)).normalize()
    sign, digits, exponent = number.as_tuple()
    power = len(digits) - 1 + int(exponent)
    if value == 0 or -4 <= power < exponent_at:
        text = format(number, "f")
        return "-0" if text == "0" and math.copysign(1, value) < 0 else text
    mantissa = "".join(map(str, digits))
    mantissa = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"


def fmt_value(value: Any) -> str:
    """Go's ``%v`` of template data."""
    if value is None or value is MISSING:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, Struct):
        return "{" + " ".join(fmt_value(v) for v in value.values() if not isinstance(v, Method)) + "}"
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{fmt_value(k)}:{fmt_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(map(fmt_value, value)) + "]"
    if isinstance(value, bytes):
        return "[" + " ".join(str(b) for b in value) + "]"
    return str(value)
