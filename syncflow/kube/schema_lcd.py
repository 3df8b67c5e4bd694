"""The lowest common denominator of OpenAPI v3 (structural) schemas: what every one of them accepts.

``common(a, b)`` is a schema of the values both ``a`` and ``b`` accept and keep (a field only one of
them knows is dropped, since the other would prune it; numeric and length bounds take the tighter
value; enums intersect; a field whose types or patterns conflict is dropped). It also reports, as
dotted paths, where the result accepts less than ``a``: ``b`` takes everything ``a`` takes exactly
when nothing is reported. Pure functions over plain dicts.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

_UPPER = ("maximum", "maxLength", "maxItems", "maxProperties")
_LOWER = ("minimum", "minLength", "minItems", "minProperties")
_STRUCTURE = frozenset(
    {"type", "properties", "items", "additionalProperties", "required", "enum", "nullable", "pattern"}
    | set(_UPPER)
    | set(_LOWER)
    | {"x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string"}
)
_PRESERVE = "x-kubernetes-preserve-unknown-fields"


def _accepts_anything(schema: Obj) -> bool:
    """A schema without a type and without structure (free-form, or ``{}``)."""
    return (
        "type" not in schema
        and not schema.get("x-kubernetes-int-or-string")
        and not any(key in schema for key in ("properties", "items", "additionalProperties", "enum"))
    )


def _boolean(schema: Any) -> Obj | None:
    """``true`` accepts anything (``{}``), ``false`` nothing (None); other values are schemas."""
    if schema is True:
        return {}
    return schema if isinstance(schema, dict) else None


def _type(schema: Obj) -> str | None:
    return "int-or-string" if schema.get("x-kubernetes-int-or-string") else schema.get("type")


def _merge_type(a: Obj, b: Obj) -> Obj | None:
    """The type keys both accept: equal types, integer within number, one side of int-or-string."""
    ta, tb = _type(a), _type(b)
    if ta == tb:
        return {k: a[k] for k in ("type", "x-kubernetes-int-or-string") if k in a}
    pair = {ta, tb}
    if pair == {"integer", "number"}:
        return {"type": "integer"}
    if "int-or-string" in pair and pair & {"integer", "string"}:
        return {"type": (pair - {"int-or-string"}).pop()}
    return None


def _fields(a: Obj, b: Obj, path: str, lost: list[str]) -> Obj:
    """``properties`` (and required, preserve-unknown) of two object schemas."""
    out: Obj = {}
    props_a, props_b = a.get("properties") or {}, b.get("properties") or {}
    keep_a, keep_b = bool(a.get(_PRESERVE)), bool(b.get(_PRESERVE))
    props: Obj = {}
    for name, sub in props_a.items():
        where = f"{path}.{name}" if path else name
        if name in props_b:
            merged = common(sub, props_b[name], where, lost)
            if merged is not None:
                props[name] = merged
        elif keep_b:
            props[name] = sub
        else:
            lost.append(where)
    if keep_a:
        props.update({name: sub for name, sub in props_b.items() if name not in props_a})
    if props:
        out["properties"] = props
    required = [
        r for r in dict.fromkeys([*(a.get("required") or []), *(b.get("required") or [])]) if r in props
    ]
    if required:
        out["required"] = required
    if keep_a and keep_b:
        out[_PRESERVE] = True
    elif keep_a:
        lost.append(f"{path} (unknown fields)" if path else "(unknown fields)")
    return out


def _constraints(a: Obj, b: Obj, path: str, lost: list[str]) -> Obj | None:
    """Bounds, enum and pattern both accept; None when they cannot both hold."""
    out: Obj = {}
    for keys, tighter in ((_UPPER, min), (_LOWER, max)):
        for key in keys:
            values = [s[key] for s in (a, b) if key in s]
            if values:
                out[key] = tighter(values)
                if out[key] != a.get(key):
                    lost.append(f"{path} ({key})")
    if "enum" in a or "enum" in b:
        enum = (
            [v for v in a["enum"] if v in b["enum"]]
            if "enum" in a and "enum" in b
            else a.get("enum", b.get("enum"))
        )
        if not enum:
            lost.append(path)
            return None
        if enum != a.get("enum"):
            lost.append(f"{path} (enum)")
        out["enum"] = enum
    if a.get("pattern") and b.get("pattern") and a["pattern"] != b["pattern"]:
        lost.append(f"{path} (pattern)")
        return None
    pattern = a.get("pattern") or b.get("pattern")
    if pattern:
        if pattern != a.get("pattern"):
            lost.append(f"{path} (pattern)")
        out["pattern"] = pattern
    if a.get("nullable") and b.get("nullable"):
        out["nullable"] = True
    elif a.get("nullable"):
        lost.append(f"{path} (nullable)")
    return out


def common(a: Obj | bool, b: Obj | bool, path: str = "", lost: list[str] | None = None) -> Obj | None:
    """A schema of the values ``a`` and ``b`` both accept (None: none of this field's values fit both);
    ``lost`` collects the paths where it accepts less than ``a``."""
    lost = [] if lost is None else lost
    if not isinstance(a, dict) or not isinstance(b, dict):  # JSON Schema's boolean forms
        a_, b_ = _boolean(a), _boolean(b)
        if a_ is None or b_ is None:
            if a_ is not None:
                lost.append(path or "(root)")
            return None
        return common(a_, b_, path, lost)
    if _accepts_anything(b):
        return dict(a)
    if _accepts_anything(a):
        lost.append(path or "(root)")
        return dict(b)
    types = _merge_type(a, b)
    if types is None:
        lost.append(path or "(root)")
        return None
    if types.get("type") != a.get("type") or bool(types.get("x-kubernetes-int-or-string")) != bool(
        a.get("x-kubernetes-int-or-string")
    ):
        lost.append(f"{path} (type)")
    constraints = _constraints(a, b, path, lost)
    if constraints is None:
        return None
    out: Obj = {k: v for k, v in a.items() if k not in _STRUCTURE}
    out.update(types)
    if types.get("type") == "object":
        out.update(_fields(a, b, path, lost))
        if "additionalProperties" in a and "additionalProperties" in b:
            values = common(a["additionalProperties"], b["additionalProperties"], f"{path}[*]", lost)
            if values is None:
                return None
            out["additionalProperties"] = values
        elif "additionalProperties" in a:
            lost.append(f"{path}[*]")
    if types.get("type") == "array" and ("items" in a or "items" in b):
        items = common(a.get("items") or {}, b.get("items") or {}, f"{path}[]", lost)
        if items is None:
            return None
        out["items"] = items
    out.update(constraints)
    return out


def lowest_common(schemas: list[Obj]) -> Obj:
    """The schema every one of ``schemas`` accepts (the first one's descriptions are kept)."""
    result = schemas[0]
    for other in schemas[1:]:
        result = common(result, other) or {"type": "object"}
    return result


def narrowed(wanted: Obj, offered: Obj) -> list[str]:
    """Where ``offered`` accepts less than ``wanted`` (empty: it takes every value ``wanted`` does)."""
    lost: list[str] = []
    common(wanted, offered, "", lost)
    return lost
