"""Go's ``encoding/json`` output for JSON-like Python values, byte for byte.

Used where a hash or a user-visible string must equal what a Go program writes: sprig's ``toJson``
and the APIResourceSchema name. Go differs from Python's ``json`` in string escaping (``<``, ``>``,
``&``, U+2028 and U+2029 are escaped as ``\\u003c`` ... unless HTML escaping is off; other non-ASCII
is written as is), in float formatting (``1e+21``, ``1e-7``; never ``1.0``) and in key order (a
``map`` is sorted by key; a struct keeps its field order, which callers give as dict order).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


class UnsupportedValueError(ValueError):
    """A value Go's ``json.Marshal`` rejects (NaN, infinities) or that has no JSON form."""


def string(text: str, escape_html: bool = True) -> str:
    """A JSON string literal as Go writes it."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif escape_html and ch in _HTML:
            out.append(_HTML[ch])
        elif code < 0x20 or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")  # a lone surrogate is invalid UTF-8 to Go
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def number(value: float) -> str:
    """A float64 as Go writes it: shortest digits, exponent form below 1e-6 or from 1e21 (``1e-7``)."""
    if math.isnan(value) or math.isinf(value):
        raise UnsupportedValueError(f"json: unsupported value: {value}")
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    magnitude = abs(value)
    if 1e-6 <= magnitude < 1e21:
        text = format(Decimal(repr(value)), "f")
        return text[:-2] if text.endswith(".0") else text
    sign, coefficient, power = Decimal(repr(value)).normalize().as_tuple()
    shown = "".join(map(str, coefficient))
    shown = shown[0] + ("." + shown[1:] if len(shown) > 1 else "")
    exp = len(coefficient) - 1 + int(power)
    return f"{'-' if sign else ''}{shown}e{'-' if exp < 0 else '+'}{abs(exp) if exp < 0 else f'{exp:02d}'}"


def encode(
    value: Any,
    *,
    escape_html: bool = True,
    indent: str | None = None,
    keep_order: type | tuple[type, ...] = (),
) -> str:
    """``json.Marshal`` (or ``MarshalIndent`` with ``indent``) of ``value``.

    Mappings are sorted by key, as Go sorts a ``map``, except instances of ``keep_order``: those stand
    for Go structs, whose fields are written in the order given.
    """
    out: list[str] = []
    _write(out, value, _Style(escape_html, indent, keep_order), "\n")
    return "".join(out)


@dataclass(frozen=True)
class _Style:
    escape_html: bool
    indent: str | None
    keep_order: type | tuple[type, ...]


def _write(out: list[str], value: Any, style: _Style, nl: str) -> None:
    escape_html, indent = style.escape_html, style.indent
    if value is None:
        out.append("null")
    elif value is True or value is False:
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(number(value))
    elif isinstance(value, str):
        out.append(string(value, escape_html))
    elif isinstance(value, Mapping):
        keys = list(value) if isinstance(value, style.keep_order) else sorted(value)
        if not keys:
            out.append("{}")
            return
        inner = nl + (indent or "")
        out.append("{")
        for i, key in enumerate(keys):
            out.append("," if i else "")
            out.append(inner if indent is not None else "")
            out.append(string(str(key), escape_html) + (": " if indent is not None else ":"))
            _write(out, value[key], style, inner)
        out.append((nl if indent is not None else "") + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = nl + (indent or "")
        out.append("[")
        for i, item in enumerate(value):
            out.append("," if i else "")
            out.append(inner if indent is not None else "")
            _write(out, item, style, inner)
        out.append((nl if indent is not None else "") + "]")
    else:
        raise UnsupportedValueError(f"json: unsupported type: {type(value).__name__}")
