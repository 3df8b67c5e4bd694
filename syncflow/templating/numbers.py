"""sprig's integer and float functions, with spf13/cast's conversions and Go's integer division."""

from __future__ import annotations

import math
import re
from typing import Any

from syncflow.templating.errors import CallError
from syncflow.templating.func import Func
from syncflow.templating.values import is_int

_OCTAL_RE = re.compile(r"[+-]?0[0-7]+")
_ZERO_DECIMAL_RE = re.compile(r"\.0*$")


def to_int64(value: Any) -> int:
    """``cast.ToInt64``: ints, truncated floats, bools as 0/1, Go-syntax integer strings; else 0."""
    if isinstance(value, bool):
        return int(value)
    if is_int(value):
        return int(value)
    if isinstance(value, float):
        return 0 if math.isnan(value) or math.isinf(value) else int(value)
    if isinstance(value, str):
        text = _ZERO_DECIMAL_RE.sub("", value) if "." in value else value
        try:
            if _OCTAL_RE.fullmatch(text):
                return int(text, 8)
            return int(text, 0) if text.isascii() and text.strip() == text else 0
        except ValueError:
            return 0
    return 0


def to_float64(value: Any) -> float:
    """``cast.ToFloat64``: numbers, bools as 0/1, numeric strings; else 0."""
    if isinstance(value, bool | int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value) if value.isascii() and value.strip() == value and "_" not in value else 0.0
        except ValueError:
            return 0.0
    return 0.0


def _div(a: Any, b: Any) -> int:
    x, y = to_int64(a), to_int64(b)
    if y == 0:
        raise CallError("runtime error: integer divide by zero")
    quotient = abs(x) // abs(y)
    return quotient if (x >= 0) == (y >= 0) else -quotient


def _mod(a: Any, b: Any) -> int:
    x, y = to_int64(a), to_int64(b)
    if y == 0:
        raise CallError("runtime error: integer divide by zero")
    return x - y * _div(x, y)


def _mul(a: Any, *rest: Any) -> int:
    product = to_int64(a)
    for b in rest:
        product *= to_int64(b)
    return product


def _whole(fn: Any, value: float) -> float:
    """``math.Floor``/``math.Ceil``: infinities and NaN stay as they are."""
    return float(fn(value)) if math.isfinite(value) else value


def _round(value: Any, places: int, *on: float) -> float:
    round_on = on[0] if on else 0.5
    power = math.pow(10, places)
    digit = power * to_float64(value)
    if not math.isfinite(digit):
        return digit
    fraction = math.modf(digit)[0]
    return (math.ceil(digit) if fraction >= round_on else math.floor(digit)) / power


FUNCTIONS: dict[str, Func] = {
    "add": Func(lambda *xs: sum(to_int64(x) for x in xs), (), "any"),
    "add1": Func(lambda x: to_int64(x) + 1, ("any",)),
    "sub": Func(lambda a, b: to_int64(a) - to_int64(b), ("any", "any")),
    "mul": Func(_mul, ("any",), "any"),
    "div": Func(_div, ("any", "any")),
    "mod": Func(_mod, ("any", "any")),
    "max": Func(lambda a, *xs: max([to_int64(a), *map(to_int64, xs)]), ("any",), "any"),
    "biggest": Func(lambda a, *xs: max([to_int64(a), *map(to_int64, xs)]), ("any",), "any"),
    "min": Func(lambda a, *xs: min([to_int64(a), *map(to_int64, xs)]), ("any",), "any"),
    "floor": Func(lambda x: _whole(math.floor, to_float64(x)), ("any",)),
    "ceil": Func(lambda x: _whole(math.ceil, to_float64(x)), ("any",)),
    "round": Func(_round, ("any", "int"), "float"),
    "int": Func(to_int64, ("any",)),
    "int64": Func(to_int64, ("any",)),
    "float64": Func(to_float64, ("any",)),
}
