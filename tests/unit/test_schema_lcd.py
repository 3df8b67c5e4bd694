"""The lowest common denominator of OpenAPI schemas (clusters mode's API negotiation)."""

from __future__ import annotations

from typing import Any

from syncflow.kube.schema_lcd import common, lowest_common, narrowed

Obj = dict[str, Any]


def obj(**props: Obj) -> Obj:
    return {"type": "object", "properties": props}


STRING: Obj = {"type": "string"}
INT: Obj = {"type": "integer"}


def test_fields_present_in_all_are_kept_and_the_others_dropped() -> None:
    east = obj(spec=obj(size=INT, color=STRING, zone=STRING))
    west = obj(spec=obj(size=INT, color=STRING))
    north = obj(spec=obj(size={"type": "integer", "maximum": 10}, color=STRING))
    assert lowest_common([east, west, north]) == obj(
        spec=obj(size={"type": "integer", "maximum": 10}, color=STRING)
    )


def test_a_cluster_takes_kcps_schema_only_when_nothing_is_narrowed() -> None:
    kcp = obj(spec=obj(size=INT, color={"type": "string", "enum": ["red", "blue"]}))
    assert narrowed(kcp, obj(spec=obj(size=INT, color=STRING, extra=STRING))) == []
    assert narrowed(kcp, obj(spec=obj(size=INT))) == ["spec.color"]
    assert narrowed(kcp, obj(spec=obj(size=STRING, color=STRING))) == ["spec.size"]
    assert narrowed(kcp, obj(spec=obj(size=INT, color={"type": "string", "enum": ["red"]}))) == [
        "spec.color (enum)"
    ]
    assert narrowed(kcp, obj(spec=obj(size={"type": "integer", "minimum": 1}, color=STRING))) == [
        "spec.size (minimum)"
    ]


def test_free_form_sides() -> None:
    free: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    strict = obj(spec=obj(size=INT))
    assert narrowed(strict, free) == []  # a free-form cluster keeps everything
    assert narrowed(free, strict) == ["(unknown fields)"]  # a strict cluster prunes unknown fields
    assert common(free, strict) == strict
    assert narrowed({}, STRING) == ["(root)"]
    assert common(STRING, {}) == STRING


def test_conflicting_types_drop_the_field_and_compatible_ones_meet() -> None:
    a = obj(
        n={"type": "number"}, port={"x-kubernetes-int-or-string": True}, p={"type": "string", "pattern": "^a"}
    )
    b = obj(n=INT, port=STRING, p={"type": "string", "pattern": "^b"})
    assert common(a, b) == obj(n=INT, port=STRING)


def test_arrays_maps_required_and_descriptions() -> None:
    a = {
        "type": "object",
        "description": "kept from the first",
        "required": ["items"],
        "properties": {
            "items": {"type": "array", "items": obj(name=STRING, size=INT)},
            "labels": {"type": "object", "additionalProperties": STRING},
        },
    }
    b = {
        "type": "object",
        "required": ["labels"],
        "properties": {
            "items": {"type": "array", "items": obj(name=STRING), "maxItems": 3},
            "labels": {"type": "object", "additionalProperties": STRING},
        },
    }
    lost: list[str] = []
    result = common(a, b, "", lost)
    assert result == {
        "type": "object",
        "description": "kept from the first",
        "properties": {
            "items": {"type": "array", "items": obj(name=STRING), "maxItems": 3},
            "labels": {"type": "object", "additionalProperties": STRING},
        },
        "required": ["items", "labels"],
    }
    assert lost == ["items (maxItems)", "items[].size"]


def test_boolean_schemas() -> None:
    maps = {"type": "object", "additionalProperties": True}
    assert common(maps, {"type": "object", "additionalProperties": STRING}) == {
        "type": "object",
        "additionalProperties": STRING,
    }
    assert narrowed(maps, {"type": "object", "additionalProperties": False}) == ["[*]"]
    assert narrowed({"type": "object", "additionalProperties": STRING}, maps) == []
