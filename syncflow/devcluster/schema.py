"""Structural-schema handling of custom resources: defaulting, pruning and OpenAPI v3 validation.

``schema`` is a CRD version's ``openAPIV3Schema`` as a plain dict. Messages follow
apiextensions-apiserver (kube-openapi errors turned into field causes). Not done:
``x-kubernetes-validations`` (CEL rules), ``allOf``/``anyOf``/``oneOf``/``not``, list-type and
map-type uniqueness (``x-kubernetes-list-type``), and formats other than ``date-time``, ``date``
and ``uuid`` (kube also ignores ``int32``/``int64`` on custom resources, so we do too).
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from syncflow.devcluster import fielderrors as fe
from syncflow.devcluster.errors import FieldError

PRESERVE_UNKNOWN = "x-kubernetes-preserve-unknown-fields"
EMBEDDED_RESOURCE = "x-kubernetes-embedded-resource"
INT_OR_STRING = "x-kubernetes-int-or-string"
_RESOURCE_FIELDS = ("apiVersion", "kind", "metadata")


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _properties(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, Mapping) else {}


def _additional(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def _items(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    items = schema.get("items")
    return items if isinstance(items, Mapping) else None


# --- defaulting ------------------------------------------------------------------------------


def apply_defaults(obj: Any, schema: Mapping[str, Any]) -> Any:
    """Fill ``default`` values of absent (or null, non-nullable) fields, recursively; returns a copy."""
    result = copy.deepcopy(obj)
    _default(result, schema)
    return result


def _default(value: Any, schema: Mapping[str, Any]) -> None:
    if isinstance(value, dict):
        props = _properties(schema)
        for name, prop in props.items():
            missing = name not in value or (value[name] is None and not prop.get("nullable"))
            if missing and "default" in prop:
                value[name] = copy.deepcopy(prop["default"])
        extra = _additional(schema)
        for name, child in value.items():
            sub = props.get(name, extra)
            if sub is not None:
                _default(child, sub)
    elif isinstance(value, list) and (items := _items(schema)) is not None:
        for child in value:
            _default(child, items)


# --- pruning ---------------------------------------------------------------------------------


def prune(obj: Any, schema: Mapping[str, Any]) -> Any:
    """Drop fields the schema does not specify; returns a copy.

    Kept: fields under ``x-kubernetes-preserve-unknown-fields: true`` or ``additionalProperties``,
    ``apiVersion``/``kind``/``metadata`` at the root and in ``x-kubernetes-embedded-resource``
    objects. Null values of non-nullable fields are dropped, as apiextensions-apiserver does before
    defaulting.
    """
    return _prune(obj, schema, root=True)


def _prune(value: Any, schema: Mapping[str, Any], *, root: bool = False) -> Any:
    if isinstance(value, list):
        items = _items(schema)
        return [_prune(v, items) if items is not None else copy.deepcopy(v) for v in value]
    if not isinstance(value, dict):
        return copy.deepcopy(value)
    props = _properties(schema)
    extra = _additional(schema)
    keep_unknown = bool(schema.get(PRESERVE_UNKNOWN)) or schema.get("additionalProperties") is True
    keep_meta = root or bool(schema.get(EMBEDDED_RESOURCE))
    out: dict[str, Any] = {}
    for name, child in value.items():
        sub = props.get(name, extra)
        if keep_meta and name in _RESOURCE_FIELDS and name not in props:
            out[name] = copy.deepcopy(child)
        elif sub is not None:
            if child is None and not sub.get("nullable"):
                continue
            out[name] = _prune(child, sub)
        elif keep_unknown:
            out[name] = copy.deepcopy(child)
    return out


def unknown_fields(obj: Any, schema: Mapping[str, Any]) -> list[str]:
    """Paths (``spec.foo``, ``spec.items[0].bar``) of the fields :func:`prune` drops as unknown."""
    found: list[str] = []
    _unknown(obj, schema, "", found, root=True)
    return found


def _unknown(
    value: Any, schema: Mapping[str, Any], path: str, found: list[str], *, root: bool = False
) -> None:
    if isinstance(value, list):
        if (items := _items(schema)) is not None:
            for i, child in enumerate(value):
                _unknown(child, items, f"{path}[{i}]", found)
        return
    if (
        not isinstance(value, dict)
        or schema.get(PRESERVE_UNKNOWN)
        or schema.get("additionalProperties") is True
    ):
        return
    props, extra = _properties(schema), _additional(schema)
    keep_meta = root or bool(schema.get(EMBEDDED_RESOURCE))
    for name, child in value.items():
        sub = props.get(name, extra)
        if keep_meta and name in _RESOURCE_FIELDS:
            continue  # apiVersion, kind and ObjectMeta are always known
        if sub is not None:
            _unknown(child, sub, _child(path, name), found)
        else:
            found.append(_child(path, name))


# --- validation ------------------------------------------------------------------------------


def validate(obj: Any, schema: Mapping[str, Any], path: str = "") -> list[FieldError]:
    """Validate ``obj`` against an OpenAPI v3 structural schema; ``path`` prefixes field paths.

    Covers ``type`` (with ``nullable`` and ``x-kubernetes-int-or-string``), ``required``, ``enum``,
    ``minimum``/``maximum`` (and exclusive), ``multipleOf``, ``minLength``/``maxLength``,
    ``pattern``, ``minItems``/``maxItems``, ``uniqueItems``, ``minProperties``/``maxProperties``,
    ``format`` (``date-time``, ``date``, ``uuid``). CEL rules (``x-kubernetes-validations``) are
    not evaluated.
    """
    errs: list[FieldError] = []
    _validate(obj, schema, path, errs)
    return errs


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_ok(value: Any, wanted: str) -> bool:
    actual = _json_type(value)
    if wanted == "number":
        return actual in ("integer", "number")
    if wanted == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == wanted


def _in_body(path: str) -> str:
    return f"{path} in body" if path else "in body"


def _check_type(value: Any, schema: Mapping[str, Any], path: str) -> FieldError | None:
    if value is None and schema.get("nullable"):
        return None
    if schema.get(INT_OR_STRING):
        wanted = ["integer", "string"]
    elif "type" in schema:
        wanted = [str(schema["type"])]
    else:
        return None
    if any(_type_ok(value, w) for w in wanted):
        return None
    actual = _json_type(value)
    detail = f"{_in_body(path)} must be of type {','.join(wanted)}: {json.dumps(actual)}"
    return fe.type_invalid(path, actual, detail)


def _validate(value: Any, schema: Mapping[str, Any], path: str, errs: list[FieldError]) -> None:
    type_error = _check_type(value, schema, path)
    if type_error is not None:
        errs.append(type_error)
        return
    if value is None:
        return
    _check_enum(value, schema, path, errs)
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        _check_number(value, schema, path, errs)
    elif isinstance(value, str):
        _check_string(value, schema, path, errs)
    elif isinstance(value, list):
        _check_array(value, schema, path, errs)
    elif isinstance(value, Mapping):
        _check_object(value, schema, path, errs)


def _check_enum(value: Any, schema: Mapping[str, Any], path: str, errs: list[FieldError]) -> None:
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        allowed = [v if isinstance(v, str) else json.dumps(v) for v in enum]
        errs.append(fe.not_supported(path, value, allowed))


def _check_number(value: float, schema: Mapping[str, Any], path: str, errs: list[FieldError]) -> None:
    body = _in_body(path)
    minimum, maximum, multiple = schema.get("minimum"), schema.get("maximum"), schema.get("multipleOf")
    if minimum is not None:
        exclusive = bool(schema.get("exclusiveMinimum"))
        if value < minimum or (exclusive and value == minimum):
            qualifier = "greater than" if exclusive else "greater than or equal to"
            errs.append(fe.invalid(path, value, f"{body} should be {qualifier} {fe.format_value(minimum)}"))
    if maximum is not None:
        exclusive = bool(schema.get("exclusiveMaximum"))
        if value > maximum or (exclusive and value == maximum):
            qualifier = "less than" if exclusive else "less than or equal to"
            errs.append(fe.invalid(path, value, f"{body} should be {qualifier} {fe.format_value(maximum)}"))
    if multiple and (value / multiple) % 1 != 0:
        errs.append(fe.invalid(path, value, f"{body} should be a multiple of {fe.format_value(multiple)}"))


def _check_string(value: str, schema: Mapping[str, Any], path: str, errs: list[FieldError]) -> None:
    body = _in_body(path)
    min_length, max_length = schema.get("minLength"), schema.get("maxLength")
    if max_length is not None and len(value) > max_length:
        errs.append(fe.too_long(path, max_length))
    if min_length is not None and len(value) < min_length:
        errs.append(fe.invalid(path, value, f"{body} should be at least {min_length} chars long"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and _compiled(pattern).search(value) is None:
        errs.append(fe.invalid(path, value, f"{body} should match '{pattern}'"))
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS and not _FORMATS[fmt](value):
        errs.append(fe.type_invalid(path, value, f"{body} must be of type {fmt}: {json.dumps(value)}"))


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _is_date_time(value: str) -> bool:
    try:
        dt.datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        return False
    return "T" in value.upper()


def _is_date(value: str) -> bool:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")


def _is_uuid(value: str) -> bool:
    return _UUID.fullmatch(value) is not None


_FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": _is_date_time,
    "datetime": _is_date_time,
    "date": _is_date,
    "uuid": _is_uuid,
}


def _check_array(value: list[Any], schema: Mapping[str, Any], path: str, errs: list[FieldError]) -> None:
    body = _in_body(path)
    min_items, max_items = schema.get("minItems"), schema.get("maxItems")
    if min_items is not None and len(value) < min_items:
        errs.append(fe.invalid(path, value, f"{body} should have at least {min_items} items"))
    if max_items is not None and len(value) > max_items:
        errs.append(fe.too_many(path, len(value), max_items))
    if schema.get("uniqueItems"):
        seen = [json.dumps(v, sort_keys=True) for v in value]
        if len(set(seen)) != len(seen):
            errs.append(fe.invalid(path, value, f"{body} shouldn't contain duplicates"))
    items = _items(schema)
    if items is not None:
        for i, item in enumerate(value):
            _validate(item, items, f"{path}[{i}]", errs)


def _check_object(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: str, errs: list[FieldError]
) -> None:
    body = _in_body(path)
    min_props, max_props = schema.get("minProperties"), schema.get("maxProperties")
    if min_props is not None and len(value) < min_props:
        errs.append(fe.invalid(path, value, f"{body} should have at least {min_props} properties"))
    if max_props is not None and len(value) > max_props:
        errs.append(fe.too_many(path, len(value), max_props))
    for name in schema.get("required") or []:
        if name not in value:
            errs.append(fe.required(_child(path, name)))
    props, extra = _properties(schema), _additional(schema)
    for name, child in value.items():
        sub = props.get(name, extra)
        if sub is not None:
            _validate(child, sub, _child(path, name), errs)
