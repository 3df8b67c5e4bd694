"""The gjson/sjson paths api-syncagent's mutations use, on decoded objects.

Supported: ``spec.foo.bar`` (no leading dot); ``\\`` escapes the next character, as in
``metadata.labels.app\\.kubernetes\\.io/name``; numeric parts index arrays (on objects they are
keys); ``-1`` appends (set) or names the last element (delete); a leading ``:`` forces a numeric part
to be a key. sjson's rules for missing parts: objects are created, or arrays when the next part is
numeric or ``-1``, padded with nulls; a scalar in the way is replaced. gjson's wildcards, ``#``
counts and queries, ``@`` modifiers and ``|`` pipes are refused with a clear error.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from syncflow.mutation.base import MutationError

_COMPLEX = frozenset("|#@*?")


@dataclass(frozen=True)
class Part:
    """One path component."""

    key: str
    force_key: bool = False

    @property
    def index(self) -> int | None:
        """The array index this part names, if it is all digits and not forced to be a key."""
        return int(self.key) if not self.force_key and self.key.isdigit() else None

    @property
    def append(self) -> bool:
        return not self.force_key and self.key == "-1"


def parse(path: str) -> tuple[Part, ...]:
    """Split ``path`` into parts; raises :class:`MutationError` for the syntax not supported."""
    if not path:
        raise MutationError("path cannot be empty")
    parts: list[Part] = []
    current: list[str] = []
    force = False
    i = 0
    while i < len(path):
        ch = path[i]
        if not current and not force and ch == ":":
            force = True
        elif ch == "\\":
            i += 1
            if i < len(path):
                current.append(path[i])
        elif ch == ".":
            parts.append(Part("".join(current), force))
            current, force = [], False
        elif ch in _COMPLEX:
            raise MutationError(
                f"path {path!r}: {ch!r} (gjson wildcards, queries, modifiers and pipes) is not supported; "
                "use a plain dotted path such as spec.foo.0.bar, escaping dots in keys with \\"
            )
        else:
            current.append(ch)
        i += 1
    parts.append(Part("".join(current), force))
    return tuple(parts)


def get(obj: Any, parts: tuple[Part, ...]) -> tuple[bool, Any]:
    """(found, value) at ``parts``, as ``gjson.Get``."""
    current = obj
    for part in parts:
        if isinstance(current, Mapping):
            if part.key not in current:
                return False, None
            current = current[part.key]
        elif isinstance(current, list) and part.index is not None and part.index < len(current):
            current = current[part.index]
        else:
            return False, None
    return True, current


def set_value(obj: Any, parts: tuple[Part, ...], value: Any) -> Any:
    """A copy of ``obj`` with ``value`` at ``parts``, as ``sjson.Set``."""
    return _set(copy.deepcopy(obj), parts, value)


def _build(parts: tuple[Part, ...], value: Any) -> Any:
    """A new value holding ``value`` at ``parts`` (sjson's ``appendBuild``)."""
    if not parts:
        return value
    head, rest = parts[0], parts[1:]
    if head.index is not None or head.append:
        return [None] * (head.index or 0) + [_build(rest, value)]
    return {head.key: _build(rest, value)}


def _set(node: Any, parts: tuple[Part, ...], value: Any) -> Any:
    if not parts:
        return value
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        node[head.key] = _set(node[head.key], rest, value) if head.key in node else _build(rest, value)
        return node
    if isinstance(node, list):
        if head.index is not None and head.index < len(node):
            node[head.index] = _set(node[head.index], rest, value)
            return node
        if head.index is None and not head.append:
            raise MutationError(f"cannot set array element for non-numeric key {head.key!r}")
        padding = [] if head.append else [None] * (head.index - len(node))  # type: ignore[operator]
        return [*node, *padding, _build(rest, value)]
    return _build(parts, value)  # a scalar in the way becomes a new object or array


def delete(obj: Any, parts: tuple[Part, ...]) -> Any:
    """A copy of ``obj`` without the value at ``parts``, as ``sjson.Delete`` (missing: unchanged)."""
    result = copy.deepcopy(obj)
    parent_found, parent = get(result, parts[:-1])
    last = parts[-1]
    if not parent_found:
        return result
    if isinstance(parent, dict):
        parent.pop(last.key, None)
    elif isinstance(parent, list):
        index = len(parent) - 1 if last.append else last.index
        if index is not None and 0 <= index < len(parent):
            del parent[index]
    return result
