"""Go's predefined template functions (``text/template``'s ``builtins``), except ``and``/``or`` (lazy,
in the executor), ``call`` and ``js``; ``slice`` is sprig's, which replaces Go's in api-syncagent."""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import Any

from syncflow.templating import gofmt
from syncflow.templating.errors import CallError
from syncflow.templating.func import Func
from syncflow.templating.values import Struct, fmt_value, go_type, is_int, is_nil, truth


def _index(item: Any, *indexes: Any) -> Any:
    """Go's ``index``: lists and strings by int (a string gives a byte), maps by key (missing: nil)."""
    if is_nil(item):
        raise CallError("index of untyped nil")
    for index in indexes:
        if is_nil(item):
            raise CallError("index of nil pointer")
        if isinstance(item, str | list | tuple):
            if is_nil(index):
                raise CallError("cannot index slice/array with nil")
            if not is_int(index):
                raise CallError(f"cannot index slice/array with type {go_type(index)}")
            size = len(item.encode()) if isinstance(item, str) else len(item)
            if index < 0 or index >= size:
                raise CallError(f"index out of range: {index}")
            item = item.encode()[index] if isinstance(item, str) else item[index]
        elif isinstance(item, Mapping) and not isinstance(item, Struct):
            if not isinstance(index, str):
                raise CallError(f"value has type {go_type(index)}; should be string")
            item = item.get(index)
        else:
            raise CallError(f"can't index item of type {go_type(item)}")
    return item


def _len(item: Any) -> int:
    if is_nil(item):
        raise CallError("len of nil pointer")
    if isinstance(item, str):
        return len(item.encode())
    if isinstance(item, list | tuple | Mapping):
        return len(item)
    raise CallError(f"len of type {go_type(item)}")


_KINDS = {bool: "bool", int: "int", float: "float", str: "string"}


def _kind(value: Any) -> str:
    """Go's ``basicKind``: the comparison class of a value, or an error for anything else."""
    kind = _KINDS.get(type(value))
    if kind is None:
        raise CallError(f"invalid type for comparison: {go_type(value)}")
    return kind


def eq(first: Any, *others: Any) -> bool:
    """Go's ``eq``: whether ``first`` equals any of the others; basic values of different kinds error."""
    if not others:
        raise CallError("missing argument for comparison")
    first_kind = _KINDS.get(type(first))
    for other in others:
        other_kind = _KINDS.get(type(other))
        if first_kind != other_kind:
            if first_kind is None and not is_nil(first):
                raise CallError(f"invalid type for comparison: {go_type(first)}")
            if not is_nil(first) and not is_nil(other):
                raise CallError(f"incompatible types for comparison: {go_type(first)} and {go_type(other)}")
            continue
        if first_kind is None:
            if is_nil(first) or is_nil(other):
                if is_nil(first) and is_nil(other):
                    return True
                continue
            raise CallError(f"non-comparable types {fmt_value(first)}: {go_type(first)}, {go_type(other)}")
        if first == other:
            return True
    return False


def _lt(first: Any, second: Any) -> bool:
    kind1, kind2 = _kind(first), _kind(second)
    if kind1 != kind2:
        raise CallError(f"incompatible types for comparison: {go_type(first)} and {go_type(second)}")
    if kind1 == "bool":
        raise CallError("invalid type for comparison: bool")
    return bool(first < second)


def _le(first: Any, second: Any) -> bool:
    return _lt(first, second) or eq(first, second)


def _html(*args: Any) -> str:
    text = gofmt.sprint(*args) if len(args) != 1 or not isinstance(args[0], str) else args[0]
    table = {"&": "&amp;", "'": "&#39;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "\0": "\ufffd"}
    return "".join(table.get(ch, ch) for ch in text)


def _urlquery(*args: Any) -> str:
    text = gofmt.sprint(*args) if len(args) != 1 or not isinstance(args[0], str) else args[0]
    return urllib.parse.quote_plus(text, safe="-_.~")


FUNCTIONS: dict[str, Func] = {
    "index": Func(_index, ("any",), "any"),
    "len": Func(_len, ("any",)),
    "not": Func(lambda value: not truth(value), ("any",)),
    "eq": Func(eq, ("any",), "any"),
    "ne": Func(lambda a, b: not eq(a, b), ("any", "any")),
    "lt": Func(_lt, ("any", "any")),
    "le": Func(_le, ("any", "any")),
    "gt": Func(lambda a, b: not _le(a, b), ("any", "any")),
    "ge": Func(lambda a, b: not _lt(a, b), ("any", "any")),
    "print": Func(gofmt.sprint, (), "any"),
    "println": Func(gofmt.sprintln, (), "any"),
    "printf": Func(gofmt.sprintf, ("string",), "any", sized=True),
    "html": Func(_html, (), "any"),
    "urlquery": Func(_urlquery, (), "any"),
}
