"""sprig's list and dict functions (``list.go``, ``dict.go``); errors where sprig panics."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from syncflow.templating.errors import CallError
from syncflow.templating.func import Func
from syncflow.templating.strings import strval
from syncflow.templating.values import Struct, go_type, is_int, is_nil


def deep_equal(a: Any, b: Any) -> bool:
    """Go's ``reflect.DeepEqual`` for template data: types must match (``1`` is not ``1.0``)."""
    if type(a) is not type(b) and not (isinstance(a, Mapping) and isinstance(b, Mapping)):
        return is_nil(a) and is_nil(b)
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(deep_equal, a, b))
    return bool(a == b)


def _in(haystack: list[Any], needle: Any) -> bool:
    return any(deep_equal(needle, item) for item in haystack)


def _as_list(what: str, value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    if is_nil(value):
        raise CallError("runtime error: invalid memory address or nil pointer dereference")
    raise CallError(
        f"Cannot {what} on type {_kind(value)}"
        if what
        else f"list should be type of slice or array but {_kind(value)}"
    )


def _kind(value: Any) -> str:
    if isinstance(value, Struct):
        return "struct"
    if isinstance(value, Mapping):
        return "map"
    return {bool: "bool", int: "int", float: "float64", str: "string"}.get(type(value), go_type(value))


def _listfn(what: str, fn: Callable[[list[Any]], Any]) -> Func:
    return Func(lambda value: fn(_as_list(what, value)), ("any",))


def _slice(value: Any, *indexes: Any) -> Any:
    items = _as_list("", value)
    if not items:
        return None
    start = _to_int(indexes[0]) if indexes else 0
    end = _to_int(indexes[1]) if len(indexes) > 1 else len(items)
    if not 0 <= start <= end <= len(items):
        raise CallError("reflect: slice index out of range")
    return items[start:end]


def _to_int(value: Any) -> int:
    from syncflow.templating.numbers import to_int64

    return to_int64(value)


def _has(needle: Any, haystack: Any) -> bool:
    if is_nil(haystack):
        return False
    return _in(_as_list("find has", haystack), needle)


def _dict(*pairs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i in range(0, len(pairs), 2):
        out[strval(pairs[i])] = pairs[i + 1] if i + 1 < len(pairs) else ""
    return out


def _dig(*args: Any) -> Any:
    if len(args) < 3:
        raise CallError("dig needs at least three arguments")
    *keys, default, data = args
    if not isinstance(data, Mapping) or isinstance(data, Struct):
        raise CallError(f"wrong type for value; expected map; got {go_type(data)}")
    current: Any = data
    for key in keys:
        if not isinstance(key, str):
            raise CallError(f"interface conversion: interface {{}} is {go_type(key)}, not string")
        if not isinstance(current, Mapping) or key not in current:
            return default
        current = current[key]
    return current


def _set(data: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    data[key] = value
    return data


def _unset(data: dict[str, Any], key: str) -> dict[str, Any]:
    data.pop(key, None)
    return data


def _maps(name: str, dicts: tuple[Any, ...]) -> list[Mapping[str, Any]]:
    for d in dicts:
        if not isinstance(d, Mapping) or isinstance(d, Struct):
            raise CallError(f"wrong type for value; expected map; got {go_type(d)}")
    return list(dicts)


def _until_step(limit: int, start: int, stop: int, step: int) -> list[int]:
    if step == 0 or (stop < start and step > 0) or (stop > start and step < 0):
        return []
    size = max(0, -(-(stop - start) // step))
    if size > limit:
        raise CallError(f"until would make {size} items, beyond the limit of {limit}")
    return list(range(start, stop, step))


FUNCTIONS: dict[str, Func] = {
    "list": Func(lambda *items: list(items), (), "any"),
    "tuple": Func(lambda *items: list(items), (), "any"),
    "first": _listfn("find first", lambda items: items[0] if items else None),
    "last": _listfn("find last", lambda items: items[-1] if items else None),
    "rest": _listfn("find rest", lambda items: items[1:] if items else None),
    "initial": _listfn("find initial", lambda items: items[:-1] if items else None),
    "reverse": _listfn("find reverse", lambda items: items[::-1]),
    "uniq": _listfn("find uniq", lambda items: [x for i, x in enumerate(items) if not _in(items[:i], x)]),
    "compact": _listfn("compact", lambda items: [x for x in items if not empty(x)]),
    "append": Func(lambda value, item: [*_as_list("push", value), item], ("any", "any")),
    "push": Func(lambda value, item: [*_as_list("push", value), item], ("any", "any")),
    "prepend": Func(lambda value, item: [item, *_as_list("prepend", value)], ("any", "any")),
    "without": Func(
        lambda value, *omit: [x for x in _as_list("find without", value) if not _in(list(omit), x)],
        ("any",),
        "any",
    ),
    "has": Func(_has, ("any", "any")),
    "concat": Func(lambda *lists: [x for value in lists for x in _as_list("concat", value)], (), "any"),
    "slice": Func(_slice, ("any",), "any"),
    "dict": Func(_dict, (), "any"),
    "get": Func(lambda data, key: data.get(key, ""), ("map", "string")),
    "set": Func(_set, ("map", "string", "any")),
    "unset": Func(_unset, ("map", "string")),
    "hasKey": Func(lambda data, key: key in data, ("map", "string")),
    "keys": Func(lambda *dicts: sorted(k for d in _maps("keys", dicts) for k in d), (), "any"),
    "values": Func(lambda data: [data[k] for k in sorted(data)], ("map",)),
    "pluck": Func(
        lambda key, *dicts: [d[key] for d in _maps("pluck", dicts) if key in d], ("string",), "any"
    ),
    "pick": Func(lambda data, *keys: {k: data[k] for k in keys if k in data}, ("map",), "string"),
    "omit": Func(lambda data, *keys: {k: v for k, v in data.items() if k not in keys}, ("map",), "string"),
    "dig": Func(_dig, (), "any"),
    "until": Func(lambda limit, n: _until_step(limit, 0, n, 1 if n >= 0 else -1), ("int",), sized=True),
    "untilStep": Func(_until_step, ("int", "int", "int"), sized=True),
}


def empty(value: Any) -> bool:
    """sprig's ``empty``: nil, false, zero and empty strings, lists and maps (a struct never is)."""
    if isinstance(value, Struct):
        return False
    if is_nil(value):
        return True
    if isinstance(value, str | list | tuple | Mapping):
        return len(value) == 0
    if isinstance(value, bool):
        return not value
    return bool(value == 0) if is_int(value) or isinstance(value, float) else False
