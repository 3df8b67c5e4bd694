"""Field paths and field sets in the form Kubernetes keeps them in ``managedFields`` (``FieldsV1``).

A path is a tuple of path elements as FieldsV1 spells them: ``f:<field>``, ``k:<JSON of the key
fields>`` for an element of an associative list, ``v:<JSON value>`` for an element of a set. A field
set is a Python set of paths; :func:`to_fields_v1` and :func:`from_fields_v1` convert it to and
from the nested FieldsV1 object, where ``{}`` marks a member leaf and ``"."`` a member that also has
members below it. :func:`describe` renders a path as kube's conflict messages do
(``.spec.containers[name="app"].image``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

Path = tuple[str, ...]
FieldSet = set[Path]


def _compact(value: Any) -> str:
    """Compact JSON with sorted keys (orjson: this runs for every list item of every write)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def field(name: str) -> str:
    """The element of a map or struct field."""
    return f"f:{name}"


def key(item: Mapping[str, Any], keys: Iterable[str]) -> str:
    """The element of an associative-list item, by its key fields (sorted, as kube writes them)."""
    return "k:" + _compact({k: item[k] for k in keys if k in item})


def from_key(text: str) -> list[str]:
    """The key field names of a ``k:`` element's JSON text."""
    return list(json.loads(text))


def value(item: Any) -> str:
    """The element of a set (a list of primitives)."""
    return "v:" + _compact(item)


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """The FieldsV1 object of a field set (keys sorted, as kube writes them)."""
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for element in path:
            node = node.setdefault(element, {})
        if node:
            node["."] = {}  # a member with members below it
        else:
            node[_LEAF] = True
    return _finish(tree)


_LEAF = ""  # marks a member leaf while the tree is built (never a real path element)


def _finish(node: dict[str, Any]) -> dict[str, Any]:
    leaf = node.pop(_LEAF, False)
    if leaf and node:
        node["."] = {}  # a member leaf that later got members below it
    return {k: (v if k == "." else _finish(v)) for k, v in sorted(node.items())}


def from_fields_v1(tree: Mapping[str, Any], prefix: Path = ()) -> FieldSet:
    """The field set of a FieldsV1 object."""
    members: FieldSet = set()
    for element, child in tree.items():
        if element == ".":
            members.add(prefix)
            continue
        path = (*prefix, element)
        if not child:
            members.add(path)
        elif isinstance(child, Mapping):
            members |= from_fields_v1(child, path)
    return members


def describe(path: Path) -> str:
    """A path as kube prints it in conflict messages."""
    out = []
    for element in path:
        kind, text = element[:2], element[2:]
        if kind == "f:":
            out.append(f".{text}")
        elif kind == "k:":
            fields = json.loads(text)
            out.append("[" + ",".join(f"{k}={_compact(v)}" for k, v in fields.items()) + "]")
        elif kind == "v:":
            out.append(f"[={text}]")
        else:
            out.append(f"[{text}]")
    return "".join(out)


def has_descendant(paths: Iterable[Path], prefix: Path) -> bool:
    """Whether any path equals ``prefix`` or lies below it."""
    size = len(prefix)
    return any(p[:size] == prefix for p in paths)
