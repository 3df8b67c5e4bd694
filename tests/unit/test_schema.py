"""CRD structural schemas: defaulting, pruning and validation as apiextensions-apiserver does them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncflow.devcluster.errors import FieldError
from syncflow.devcluster.schema import apply_defaults, prune, validate

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["image"],
            "properties": {
                "image": {"type": "string", "minLength": 1, "maxLength": 20, "pattern": "^[a-z0-9:./-]*$"},
                "replicas": {"type": "integer", "default": 1, "minimum": 0, "maximum": 10},
                "ratio": {"type": "number", "exclusiveMinimum": True, "minimum": 0, "multipleOf": 0.5},
                "mode": {"type": "string", "enum": ["Fast", "Safe"], "default": "Safe"},
                "port": {"x-kubernetes-int-or-string": True},
                "note": {"type": "string", "nullable": True},
                "paused": {"type": "boolean"},
                "startAt": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
                "ports": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"},
                        },
                    },
                },
                "env": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 2},
                "settings": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
                },
                "limits": {
                    "type": "object",
                    "default": {},
                    "properties": {"cpu": {"type": "string", "default": "100m"}},
                },
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


def causes(errs: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.field, e.reason, e.message) for e in errs]


# --- defaulting -------------------------------------------------------------------------------


def test_defaults_fill_absent_fields_recursively() -> None:
    obj = {"spec": {"image": "x", "ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}}
    result = apply_defaults(obj, SCHEMA)
    assert result["spec"]["replicas"] == 1
    assert result["spec"]["mode"] == "Safe"
    assert result["spec"]["ports"] == [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]
    assert result["spec"]["limits"] == {"cpu": "100m"}  # a defaulted object gets its own defaults
    assert "status" not in result
    assert obj == {"spec": {"image": "x", "ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}}


def test_defaults_keep_set_values_and_replace_non_nullable_nulls() -> None:
    result = apply_defaults({"spec": {"replicas": 3, "mode": None, "limits": {"cpu": "1"}}}, SCHEMA)
    assert result["spec"]["replicas"] == 3
    assert result["spec"]["mode"] == "Safe"
    assert result["spec"]["limits"] == {"cpu": "1"}


def test_defaults_do_not_create_parents() -> None:
    assert apply_defaults({"kind": "Widget"}, SCHEMA) == {"kind": "Widget"}


# --- pruning ----------------------------------------------------------------------------------


def test_prune_drops_unknown_fields_but_keeps_resource_fields() -> None:
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "anything": 1},
        "spec": {"image": "x", "bogus": True, "ports": [{"port": 1, "junk": 2}]},
        "extra": {"a": 1},
    }
    assert prune(obj, SCHEMA) == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "anything": 1},
        "spec": {"image": "x", "ports": [{"port": 1}]},
    }
    assert "bogus" in obj["spec"]


def test_prune_preserves_unknown_additional_and_embedded() -> None:
    obj = {
        "spec": {
            "settings": {"free": {"form": [1]}},
            "env": {"A": "1", "B": "2"},
            "template": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"size": 1, "unknown": 2},
                "other": 3,
            },
        }
    }
    result = prune(obj, SCHEMA)
    assert result["spec"]["settings"] == {"free": {"form": [1]}}
    assert result["spec"]["env"] == {"A": "1", "B": "2"}
    assert result["spec"]["template"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"size": 1},
    }


def test_prune_drops_nulls_of_non_nullable_fields() -> None:
    result = prune({"spec": {"image": None, "note": None}}, SCHEMA)
    assert result == {"spec": {"note": None}}


def test_root_preserve_unknown_fields_keeps_everything() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    obj = {"spec": {"a": [1, {"b": 2}]}, "x": 1}
    assert prune(obj, schema) == obj


_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=4)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@given(st.dictionaries(st.sampled_from(["spec", "status", "kind", "junk"]), _json, max_size=4))
def test_prune_is_idempotent_and_defaulting_is_stable(obj: dict[str, Any]) -> None:
    once = prune(obj, SCHEMA)
    assert prune(once, SCHEMA) == once
    defaulted = apply_defaults(once, SCHEMA)
    assert apply_defaults(defaulted, SCHEMA) == defaulted


# --- validation -------------------------------------------------------------------------------

VALID = {"spec": {"image": "nginx:1", "replicas": 2, "port": "http", "tags": ["a"], "note": None}}


def test_valid_object_has_no_errors() -> None:
    assert validate(VALID, SCHEMA) == []
    assert validate({**VALID, "spec": {**VALID["spec"], "port": 8080, "replicas": 2.0}}, SCHEMA) == []


def test_type_errors_use_kube_wording() -> None:
    errs = validate({"spec": {"image": "x", "replicas": "three", "paused": "yes", "port": True}}, SCHEMA)
    assert causes(errs) == [
        (
            "spec.replicas",
            "FieldValueTypeInvalid",
            'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        ),
        (
            "spec.paused",
            "FieldValueTypeInvalid",
            'Invalid value: "string": spec.paused in body must be of type boolean: "string"',
        ),
        (
            "spec.port",
            "FieldValueTypeInvalid",
            'Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
        ),
    ]


def test_null_needs_nullable() -> None:
    errs = validate({"spec": {"image": None}}, SCHEMA)
    assert causes(errs) == [
        (
            "spec.image",
            "FieldValueTypeInvalid",
            'Invalid value: "null": spec.image in body must be of type string: "null"',
        )
    ]


def test_required_and_path_prefix() -> None:
    assert causes(validate({"spec": {}}, SCHEMA)) == [("spec.image", "FieldValueRequired", "Required value")]
    spec_schema = SCHEMA["properties"]["spec"]
    assert [e.field for e in validate({}, spec_schema, "spec")] == ["spec.image"]


def test_enum() -> None:
    (err,) = validate({"spec": {"image": "x", "mode": "Turbo"}}, SCHEMA)
    assert (err.field, err.reason) == ("spec.mode", "FieldValueNotSupported")
    assert err.message == 'Unsupported value: "Turbo": supported values: "Fast", "Safe"'
    (err,) = validate(5, {"type": "integer", "enum": [1, 2]})
    assert err.message == 'Unsupported value: 5: supported values: "1", "2"'


@pytest.mark.parametrize(
    ("spec", "field", "reason", "message"),
    [
        ({"replicas": -1}, "spec.replicas", "FieldValueInvalid",
         "Invalid value: -1: spec.replicas in body should be greater than or equal to 0"),
        ({"replicas": 11}, "spec.replicas", "FieldValueInvalid",
         "Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
        ({"ratio": 0}, "spec.ratio", "FieldValueInvalid",
         "Invalid value: 0: spec.ratio in body should be greater than 0"),
        ({"ratio": 0.75}, "spec.ratio", "FieldValueInvalid",
         "Invalid value: 0.75: spec.ratio in body should be a multiple of 0.5"),
        ({"image": ""}, "spec.image", "FieldValueInvalid",
         'Invalid value: "": spec.image in body should be at least 1 chars long'),
        ({"image": "a" * 21}, "spec.image", "FieldValueTooLong", "Too long: may not be more than 20 bytes"),
        ({"image": "UPPER"}, "spec.image", "FieldValueInvalid",
         "Invalid value: \"UPPER\": spec.image in body should match '^[a-z0-9:./-]*$'"),
        ({"tags": []}, "spec.tags", "FieldValueInvalid",
         "Invalid value: []: spec.tags in body should have at least 1 items"),
        ({"tags": ["a", "b", "c", "d"]}, "spec.tags", "FieldValueTooMany",
         "Too many: 4: must have at most 3 items"),
        ({"tags": ["a", 1]}, "spec.tags[1]", "FieldValueTypeInvalid",
         'Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"'),
        ({"env": {"A": "1", "B": "2", "C": "3"}}, "spec.env", "FieldValueTooMany",
         "Too many: 3: must have at most 2 items"),
        ({"env": {"A": 1}}, "spec.env.A", "FieldValueTypeInvalid",
         'Invalid value: "integer": spec.env.A in body must be of type string: "integer"'),
        ({"startAt": "yesterday"}, "spec.startAt", "FieldValueTypeInvalid",
         'Invalid value: "yesterday": spec.startAt in body must be of type date-time: "yesterday"'),
        ({"ports": [{"port": "http"}]}, "spec.ports[0].port", "FieldValueTypeInvalid",
         'Invalid value: "string": spec.ports[0].port in body must be of type integer: "string"'),
    ],
)  # fmt: skip
def test_value_constraints(spec: dict[str, Any], field: str, reason: str, message: str) -> None:
    errs = validate({"spec": {"image": "x", **spec}}, SCHEMA)
    assert causes(errs) == [(field, reason, message)]


def test_date_time_accepts_rfc3339() -> None:
    assert validate({"spec": {"image": "x", "startAt": "2026-11-25T10:00:00Z"}}, SCHEMA) == []
    assert validate("2026-11-25", {"type": "string", "format": "date"}) == []
    assert validate("2026-13-25", {"type": "string", "format": "date"}) != []


def test_unique_items_and_min_properties() -> None:
    (err,) = validate([1, 1], {"type": "array", "uniqueItems": True}, "spec.xs")
    assert err.message == "Invalid value: [1,1]: spec.xs in body shouldn't contain duplicates"
    (err,) = validate({}, {"type": "object", "minProperties": 1}, "spec.m")
    assert err.message == "Invalid value: {}: spec.m in body should have at least 1 properties"


def test_wrong_type_stops_further_checks_and_unknown_fields_are_not_errors() -> None:
    assert len(validate({"spec": "nope"}, SCHEMA)) == 1
    assert validate({"spec": {"image": "x", "whatever": 1}}, SCHEMA) == []


def test_validate_does_not_mutate() -> None:
    obj = {"spec": {"image": "x", "ports": [{}]}}
    before = copy.deepcopy(obj)
    validate(obj, SCHEMA)
    assert obj == before
