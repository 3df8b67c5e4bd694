"""A CRD spec as Go's ``encoding/json`` writes ``apiextensionsv1.CustomResourceDefinitionSpec``.

api-syncagent names an APIResourceSchema after the SHA-1 of that JSON (``json.NewEncoder(...).Encode``
of the spec with ``conversion`` set to nil), so the bytes must be Go's: struct fields in declaration
order (k8s.io/apiextensions-apiserver ``pkg/apis/apiextensions/v1`` types.go and
types_jsonschema.go), ``omitempty`` as Go applies it (zero values and empty lists and maps left out,
pointers kept unless nil, fields without it always written), maps sorted by key, unknown fields
dropped (the struct has nowhere to put them), raw JSON values (``default``, ``example``, ``enum``)
in the order given, HTML escaping, and the Encoder's trailing newline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncflow.gocompat import gojson


class _Struct(dict[str, Any]):
    """A Go struct (or raw JSON object): written in the order its fields were added."""


# field name, type, omitempty. Types: "string", "bool", "int", "float" (zero values drop with
# omitempty); "*..." a pointer (dropped only when absent); "[]X" a slice; "map X" a map; "json" a raw
# value; "props|array", "props|bool", "props|strings" the JSONSchemaPropsOr* unions; other names are
# structs below.
_Field = tuple[str, str, bool]
_STRUCTS: dict[str, tuple[_Field, ...]] = {
    "CustomResourceDefinitionSpec": (
        ("group", "string", False),
        ("names", "CustomResourceDefinitionNames", False),
        ("scope", "string", False),
        ("versions", "[]CustomResourceDefinitionVersion", False),
        # conversion is set to nil before hashing
        ("preserveUnknownFields", "bool", True),
    ),
    "CustomResourceDefinitionNames": (
        ("plural", "string", False),
        ("singular", "string", True),
        ("shortNames", "[]string", True),
        ("kind", "string", False),
        ("listKind", "string", True),
        ("categories", "[]string", True),
    ),
    "CustomResourceDefinitionVersion": (
        ("name", "string", False),
        ("served", "bool", False),
        ("storage", "bool", False),
        ("deprecated", "bool", True),
        ("deprecationWarning", "*string", True),
        ("schema", "*CustomResourceValidation", True),
        ("subresources", "*CustomResourceSubresources", True),
        ("additionalPrinterColumns", "[]CustomResourceColumnDefinition", True),
        ("selectableFields", "[]SelectableField", True),
    ),
    "SelectableField": (("jsonPath", "string", False),),
    "CustomResourceColumnDefinition": (
        ("name", "string", False),
        ("type", "string", False),
        ("format", "string", True),
        ("description", "string", True),
        ("priority", "int", True),
        ("jsonPath", "string", False),
    ),
    "CustomResourceValidation": (("openAPIV3Schema", "*JSONSchemaProps", True),),
    "CustomResourceSubresources": (
        ("status", "*CustomResourceSubresourceStatus", True),
        ("scale", "*CustomResourceSubresourceScale", True),
    ),
    "CustomResourceSubresourceStatus": (),
    "CustomResourceSubresourceScale": (
        ("specReplicasPath", "string", False),
        ("statusReplicasPath", "string", False),
        ("labelSelectorPath", "*string", True),
    ),
    "JSONSchemaProps": (
        ("id", "string", True),
        ("$schema", "string", True),
        ("$ref", "*string", True),
        ("description", "string", True),
        ("type", "string", True),
        ("format", "string", True),
        ("title", "string", True),
        ("default", "*json", True),
        ("maximum", "*float", True),
        ("exclusiveMaximum", "bool", True),
        ("minimum", "*float", True),
        ("exclusiveMinimum", "bool", True),
        ("maxLength", "*int", True),
        ("minLength", "*int", True),
        ("pattern", "string", True),
        ("maxItems", "*int", True),
        ("minItems", "*int", True),
        ("uniqueItems", "bool", True),
        ("multipleOf", "*float", True),
        ("enum", "[]json", True),
        ("maxProperties", "*int", True),
        ("minProperties", "*int", True),
        ("required", "[]string", True),
        ("items", "*props|array", True),
        ("allOf", "[]JSONSchemaProps", True),
        ("oneOf", "[]JSONSchemaProps", True),
        ("anyOf", "[]JSONSchemaProps", True),
        ("not", "*JSONSchemaProps", True),
        ("properties", "map JSONSchemaProps", True),
        ("additionalProperties", "*props|bool", True),
        ("patternProperties", "map JSONSchemaProps", True),
        ("dependencies", "map props|strings", True),
        ("additionalItems", "*props|bool", True),
        ("definitions", "map JSONSchemaProps", True),
        ("externalDocs", "*ExternalDocumentation", True),
        ("example", "*json", True),
        ("nullable", "bool", True),
        ("x-kubernetes-preserve-unknown-fields", "*bool", True),
        ("x-kubernetes-embedded-resource", "bool", True),
        ("x-kubernetes-int-or-string", "bool", True),
        ("x-kubernetes-list-map-keys", "[]string", True),
        ("x-kubernetes-list-type", "*string", True),
        ("x-kubernetes-map-type", "*string", True),
        ("x-kubernetes-validations", "[]ValidationRule", True),
    ),
    "ExternalDocumentation": (("description", "string", True), ("url", "string", True)),
    "ValidationRule": (
        ("rule", "string", False),
        ("message", "string", True),
        ("messageExpression", "string", True),
        ("reason", "*string", True),
        ("fieldPath", "string", True),
        ("optionalOldSelf", "*bool", True),
    ),
}
_ZERO: dict[str, Any] = {"string": "", "bool": False, "int": 0, "float": 0.0}


def _raw(value: Any) -> Any:
    """A raw JSON value (``apiextensionsv1.JSON``): objects keep the order they were given in."""
    if isinstance(value, Mapping):
        return _Struct({str(k): _raw(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return [_raw(v) for v in value]
    return value


def _value(kind: str, value: Any) -> Any:
    """``value`` shaped as Go's type ``kind`` marshals it."""
    if kind.startswith("*"):
        return None if value is None else _value(kind[1:], value)
    if kind.startswith("[]"):
        return None if value is None else [_value(kind[2:], item) for item in value]
    if kind.startswith("map "):
        return None if value is None else {str(k): _value(kind[4:], v) for k, v in value.items()}
    if kind == "json":
        return _raw(value)
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    if kind in ("string", "bool"):
        return value
    if kind == "props|array":
        return _value("[]JSONSchemaProps" if isinstance(value, list) else "JSONSchemaProps", value)
    if kind == "props|bool":
        return value if isinstance(value, bool) else _value("JSONSchemaProps", value)
    if kind == "props|strings":
        return list(value) if isinstance(value, list) else _value("JSONSchemaProps", value)
    return _struct(kind, value or {})


def _empty(kind: str, value: Any) -> bool:
    """Go's ``omitempty`` test for a field of type ``kind``."""
    if value is None:
        return True
    if kind.startswith(("[]", "map ")):
        return len(value) == 0
    return kind in _ZERO and value == _ZERO[kind]


def _struct(name: str, value: Mapping[str, Any]) -> _Struct:
    out = _Struct()
    for field, kind, omitempty in _STRUCTS[name]:
        given = value.get(field)
        if given is None and kind in _ZERO:
            given = _ZERO[kind]
        shaped = _value(kind, given)
        if omitempty and _empty(kind, shaped):
            continue
        out[field] = shaped
    return out


def crd_spec_json(spec: Mapping[str, Any]) -> str:
    """What ``json.NewEncoder(w).Encode(crd.Spec)`` writes for ``spec`` with ``conversion`` nil."""
    return gojson.encode(_struct("CustomResourceDefinitionSpec", spec), keep_order=_Struct) + "\n"
