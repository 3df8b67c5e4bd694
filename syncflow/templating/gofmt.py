"""Go's ``fmt`` for template data: ``Sprintf``, ``Sprint``, ``Sprintln`` and ``strconv.Quote``.

Verbs by type, as Go applies them: bool ``%t %v``; integers ``%d %b %o %O %x %X %c %q %U %v``; floats
``%e %E %f %F %g %G %v``; strings ``%s %q %x %X %v``; lists and maps apply the verb to each element.
Flags ``+ - # space 0``, width and precision. A verb that does not fit its argument prints
``%!d(string=x)``, a missing argument ``%!d(MISSING)`` and left-over arguments ``%!(EXTRA ...)``, as in
Go. Widths and precisions are checked against the output limit before anything is formatted, so
``%050000000d`` fails at once. Not supported (an error rather than output that differs from Go):
``*`` widths, argument indexes ``%[n]``, ``%#v`` and hexadecimal floats.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from syncflow.templating.errors import CallError
from syncflow.templating.values import MISSING, Struct, fmt_value, go_float, go_type, is_int

_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def quote(text: str, ascii_only: bool = False) -> str:
    """Go's ``strconv.Quote`` (``QuoteToASCII`` when ``ascii_only``)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[ch])
        elif ch.isprintable() and not (ascii_only and code >= 0x80):
            out.append(ch)
        else:
            out.append(
                f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
    return "".join(out) + '"'


def _quote_rune(code: int) -> str:
    """Go's ``strconv.QuoteRune``."""
    if code == ord("'"):
        return "'\\''"
    if code == ord('"'):
        return "'\"'"
    return "'" + quote(chr(code) if 0 <= code <= 0x10FFFF else "\ufffd")[1:-1] + "'"


@dataclass(frozen=True)
class _Spec:
    flags: str
    width: int | None
    precision: int | None
    verb: str


_SPEC_RE = re.compile(r"%([-+# 0]*)(\d+)?(?:\.(\d*))?(.?)", re.S)


def _pad(text: str, spec: _Spec, zero_ok: bool) -> str:
    if spec.width is None or len(text) >= spec.width:
        return text
    if "-" in spec.flags:
        return text.ljust(spec.width)
    if "0" in spec.flags and zero_ok:
        sign = text[0] if text[:1] in ("-", "+", " ") else ""
        return sign + text[len(sign) :].rjust(spec.width - len(sign), "0")
    return text.rjust(spec.width)


def _sign(negative: bool, flags: str) -> str:
    return "-" if negative else "+" if "+" in flags else " " if " " in flags else ""


def _int(value: int, spec: _Spec) -> str | None:
    verb, flags = spec.verb, spec.flags
    if verb in "cqU":
        if verb == "c":
            return _pad(chr(value) if 0 <= value <= 0x10FFFF else "\ufffd", spec, True)
        if verb == "q":
            return _pad(_quote_rune(value), spec, True)
        text = f"U+{value:04X}"
        if "#" in flags and 0 <= value <= 0x10FFFF and chr(value).isprintable():
            text += f" '{chr(value)}'"
        return _pad(text, spec, True)
    bases = {"d": "d", "v": "d", "b": "b", "o": "o", "O": "o", "x": "x", "X": "X"}
    if verb not in bases:
        return None
    digits = format(abs(value), bases[verb])
    if spec.precision is not None:
        digits = "" if spec.precision == 0 and value == 0 else digits.rjust(spec.precision, "0")
    prefix = ""
    if verb == "O" or ("#" in flags and verb == "o" and not digits.startswith("0")):
        prefix = "0o" if verb == "O" else "0"
    elif "#" in flags and verb in "xXb":
        prefix = {"x": "0x", "X": "0X", "b": "0b"}[verb]
    sign = _sign(value < 0, flags)
    body = prefix + digits
    if spec.width is not None and "0" in flags and "-" not in flags and spec.precision is None:
        body = prefix + digits.rjust(spec.width - len(sign) - len(prefix), "0")
    return _pad(sign + body, spec, False)


def _float(value: float, spec: _Spec) -> str | None:
    verb, flags = spec.verb, spec.flags
    if verb not in "eEfFgGv":
        return None
    if math.isnan(value) or math.isinf(value):
        text = "NaN" if math.isnan(value) else "Inf"
        sign = "" if math.isnan(value) and "+" not in flags else _sign(value < 0, flags)
        if math.isnan(value) and "+" in flags:
            sign = "+"
        return _pad(sign + text, spec, False)
    negative = math.copysign(1, value) < 0
    magnitude = abs(value)
    if verb in "vgG" and spec.precision is None:
        text = go_float(magnitude)
        text = text.upper() if verb == "G" else text
    elif verb in "vgG":
        text = format(magnitude, f".{max(spec.precision or 0, 1) if spec.precision else 1}g")
        text = _go_exponent(text.upper() if verb == "G" else text)
    else:
        precision = 6 if spec.precision is None else spec.precision
        text = _go_exponent(format(magnitude, f".{precision}{verb.lower() if verb in 'fF' else verb}"))
    if "#" in flags and "." not in text and verb in "eEfF":
        text = re.sub(r"^(\d+)", r"\1.", text)
    return _pad(_sign(negative, flags) + text, spec, True)


def _go_exponent(text: str) -> str:
    """Python's ``e+6``/``e+06`` exponents in Go's at-least-two-digit form."""
    return re.sub(r"([eE][+-])(\d)$", r"\g<1>0\2", text)


def _string(value: str, spec: _Spec) -> str | None:
    verb, flags = spec.verb, spec.flags
    if spec.precision is not None and verb in "sqvxX":
        value = value[: spec.precision] if verb in "sqv" else value
    if verb in "sv":
        return _pad(value, spec, True)
    if verb == "q":
        if "#" in flags and "`" not in value and all(c.isprintable() or c == "\t" for c in value):
            return _pad(f"`{value}`", spec, True)
        return _pad(quote(value, ascii_only="+" in flags), spec, True)
    if verb in "xX":
        data = value.encode()
        if spec.precision is not None:
            data = data[: spec.precision]
        parts = [f"{byte:02x}" for byte in data]
        prefix = "0x" if "#" in flags else ""
        sep = " " if " " in flags else ""
        text = sep.join(prefix + p for p in parts) if sep else prefix * bool(parts) + "".join(parts)
        return _pad(text.upper() if verb == "X" else text, spec, True)
    return None


def _one(value: Any, spec: _Spec) -> str:
    """One verb applied to one argument."""
    if value is None or value is MISSING:
        return _pad("<nil>", spec, False) if spec.verb == "v" else f"%!{spec.verb}(<nil>)"
    if isinstance(value, Struct):
        if spec.verb != "v":
            return f"%!{spec.verb}(struct={fmt_value(value)})"
        return _pad(fmt_value(value), spec, False)
    if isinstance(value, Mapping):
        items = (f"{_one(k, spec)}:{_one(value[k], spec)}" for k in sorted(value))
        return "map[" + " ".join(items) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(_one(item, spec) for item in value) + "]"
    text: str | None = None
    if isinstance(value, bool):
        text = _pad("true" if value else "false", spec, False) if spec.verb in "tv" else None
    elif is_int(value):
        text = _int(value, spec)
    elif isinstance(value, float):
        if spec.verb in "xXbp":
            raise CallError(f"printf verb %{spec.verb} of a float64 is not supported")
        text = _float(value, spec)
    elif isinstance(value, str):
        text = _string(value, spec)
    if text is None:
        return f"%!{spec.verb}({go_type(value)}={fmt_value(value)})"
    return text


def sprintf(limit: int, fmt: str, *args: Any) -> str:
    """Go's ``fmt.Sprintf``; widths or precisions beyond ``limit`` are refused before formatting."""
    out: list[str] = []
    pos = used = 0
    while (start := fmt.find("%", pos)) >= 0:
        out.append(fmt[pos:start])
        match = _SPEC_RE.match(fmt, start)
        assert match is not None  # the pattern matches any "%"
        flags, width, precision, verb = match.groups()
        pos = match.end()
        if verb == "%":
            out.append("%")
            continue
        if not verb:
            out.append("%!(NOVERB)")
            continue
        if verb in "*[":
            raise CallError(f"printf: %{verb} (width or argument index from the arguments) is not supported")
        if verb == "T":
            out.append(go_type(args[used]) if used < len(args) else "%!T(MISSING)")
            used += 1
            continue
        if verb == "v" and "#" in flags:
            raise CallError("printf: %#v (Go-syntax values) is not supported")
        for number in (width, precision):
            if number and int(number) > limit:
                raise CallError(
                    f"printf: width or precision {int(number)} exceeds the output limit of {limit}"
                )
        spec = _Spec(
            flags, int(width) if width else None, int(precision or 0) if precision is not None else None, verb
        )
        if used >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        out.append(_one(args[used], spec))
        used += 1
    out.append(fmt[pos:])
    if used < len(args):
        out.append("%!(EXTRA " + ", ".join(f"{go_type(a)}={fmt_value(a)}" for a in args[used:]) + ")")
    return "".join(out)


def sprint(*args: Any) -> str:
    """Go's ``fmt.Sprint``: a space between operands when neither is a string."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if i and not isinstance(arg, str) and not isinstance(args[i - 1], str):
            out.append(" ")
        out.append(fmt_value(arg))
    return "".join(out)


def sprintln(*args: Any) -> str:
    """Go's ``fmt.Sprintln``: operands always separated by spaces, then a newline."""
    return " ".join(fmt_value(arg) for arg in args) + "\n"
