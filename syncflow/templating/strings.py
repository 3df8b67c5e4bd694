"""sprig's string functions (``strings.go`` and the string entries of its function map).

Lengths and offsets are in bytes of UTF-8, as in Go; a cut inside a character keeps the whole
characters only (Go would keep the partial bytes, which no Kubernetes name or label allows).
"""

from __future__ import annotations

from typing import Any

from syncflow.templating import gofmt
from syncflow.templating.errors import CallError
from syncflow.templating.func import Func, check_size
from syncflow.templating.values import fmt_value, is_nil


def strval(value: Any) -> str:
    """sprig's ``strval``: strings as they are, everything else as ``%v``."""
    return value if isinstance(value, str) else fmt_value(value)


def strslice(value: Any) -> list[str]:
    """sprig's ``strslice``: a list's non-nil items as strings; nil is empty; anything else one item."""
    if isinstance(value, list | tuple):
        return [strval(item) for item in value if item is not None]
    return [] if is_nil(value) else [strval(value)]


def _bytes_cut(text: str, start: int, end: int | None = None) -> str:
    return text.encode()[start:end].decode(errors="ignore")


def _trunc(count: int, text: str) -> str:
    size = len(text.encode())
    if count < 0 and size + count > 0:
        return _bytes_cut(text, size + count)
    if count >= 0 and size > count:
        return _bytes_cut(text, 0, count)
    return text


def _substr(start: int, end: int, text: str) -> str:
    size = len(text.encode())
    if start < 0:
        if end > size or end < 0:
            raise CallError(f"slice bounds out of range [:{end}] with length {size}")
        return _bytes_cut(text, 0, end)
    if end < 0 or end > size:
        if start > size:
            raise CallError(f"slice bounds out of range [{start}:{size}]")
        return _bytes_cut(text, start)
    if start > end:
        raise CallError(f"slice bounds out of range [{start}:{end}]")
    return _bytes_cut(text, start, end)


def _repeat(limit: int, count: int, text: str) -> str:
    if count < 0:
        raise CallError("strings: negative Repeat count")
    check_size(limit, count * len(text), "repeat")
    return text * count


def _indent(limit: int, spaces: int, text: str) -> str:
    check_size(limit, max(spaces, 0) * (text.count("\n") + 1) + len(text), "indent")
    pad = " " * max(spaces, 0)
    return pad + text.replace("\n", "\n" + pad)


def _quote(*items: Any) -> str:
    return " ".join(gofmt.quote(strval(item)) for item in items if item is not None)


def _squote(*items: Any) -> str:
    return " ".join(f"'{fmt_value(item)}'" for item in items if item is not None)


def _cat(*items: Any) -> str:
    return " ".join(fmt_value(item) for item in items if item is not None)


def _title(text: str) -> str:
    """Go's deprecated ``strings.Title``: upper-case the first letter after anything not a letter/digit."""
    out, prev = [], " "
    for ch in text:
        out.append(ch.upper() if _separator(prev) else ch)
        prev = ch
    return "".join(out)


def _separator(ch: str) -> bool:
    if ch.isascii():
        return not (ch.isalnum() or ch == "_")
    return not (ch.isalpha() or ch.isdigit()) and ch.isspace()


def _untitle(text: str) -> str:
    return text[:1].lower() + text[1:]


def _split(sep: str, text: str, count: int = -1) -> dict[str, str]:
    parts = _go_split(text, sep, count)
    return {f"_{i}": part for i, part in enumerate(parts)}


def _go_split(text: str, sep: str, count: int = -1) -> list[str]:
    """Go's ``strings.SplitN``: an empty separator splits into characters; ``count`` 0 gives nothing."""
    if count == 0:
        return []
    if sep == "":
        chars = list(text)
        if 0 < count < len(chars):
            return [*chars[: count - 1], "".join(chars[count - 1 :])]
        return chars
    return text.split(sep, count - 1 if count > 0 else -1)


def _atoi(text: str) -> int:
    try:
        return int(text, 10) if text.isascii() and text.strip() == text and "_" not in text else 0
    except ValueError:
        return 0


def _plural(one: str, many: str, count: int) -> str:
    return one if count == 1 else many


def _trim_all(cut: str, text: str) -> str:
    return text.strip(cut) if cut else text


def _nospace(text: str) -> str:
    return "".join(ch for ch in text if not ch.isspace())


def _join(sep: str, value: Any) -> str:
    return sep.join(strslice(value))


def _sort_alpha(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return sorted(strslice(value), key=lambda s: s.encode())
    return [strval(value)]


FUNCTIONS: dict[str, Func] = {
    "trim": Func(lambda s: s.strip(" \t\n\r\v\f\u0085\u00a0"), ("string",)),
    "trimAll": Func(_trim_all, ("string", "string")),
    "trimall": Func(_trim_all, ("string", "string")),
    "trimPrefix": Func(lambda prefix, s: s.removeprefix(prefix), ("string", "string")),
    "trimSuffix": Func(lambda suffix, s: s.removesuffix(suffix), ("string", "string")),
    "upper": Func(str.upper, ("string",)),
    "lower": Func(str.lower, ("string",)),
    "title": Func(_title, ("string",)),
    "untitle": Func(_untitle, ("string",)),
    "substr": Func(_substr, ("int", "int", "string")),
    "repeat": Func(_repeat, ("int", "string"), sized=True),
    "nospace": Func(_nospace, ("string",)),
    "trunc": Func(_trunc, ("int", "string")),
    "contains": Func(lambda sub, s: sub in s, ("string", "string")),
    "hasPrefix": Func(lambda prefix, s: s.startswith(prefix), ("string", "string")),
    "hasSuffix": Func(lambda suffix, s: s.endswith(suffix), ("string", "string")),
    "quote": Func(_quote, (), "any"),
    "squote": Func(_squote, (), "any"),
    "cat": Func(_cat, (), "any"),
    "indent": Func(_indent, ("int", "string"), sized=True),
    "nindent": Func(lambda limit, n, s: "\n" + _indent(limit, n, s), ("int", "string"), sized=True),
    "replace": Func(lambda old, new, s: s.replace(old, new), ("string", "string", "string")),
    "plural": Func(_plural, ("string", "string", "int")),
    "toString": Func(strval, ("any",)),
    "toStrings": Func(strslice, ("any",)),
    "atoi": Func(_atoi, ("string",)),
    "split": Func(_split, ("string", "string")),
    "splitn": Func(lambda sep, n, s: _split(sep, s, n), ("string", "int", "string")),
    "splitList": Func(lambda sep, s: _go_split(s, sep), ("string", "string")),
    "join": Func(_join, ("string", "any")),
    "sortAlpha": Func(_sort_alpha, ("any",)),
}
