"""Name validators: the wording and limits of apimachinery's util/validation."""

from __future__ import annotations

import pytest

from syncflow.devcluster.errors import FieldError
from syncflow.devcluster.meta_validation import validate_object_meta
from syncflow.util import names

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name' or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


@pytest.mark.parametrize("value", ["a", "ab", "a-b", "a.b", "1.2.3", "example.com", "a" * 253, "0"])
def test_valid_subdomains(value: str) -> None:
    assert names.dns1123_subdomain(value) == []


@pytest.mark.parametrize("value", ["", "A", "-a", "a-", "a..b", ".a", "a_b", "a b", "ä"])
def test_invalid_subdomains_report_the_regex(value: str) -> None:
    assert names.dns1123_subdomain(value) == [SUBDOMAIN_MSG]


def test_subdomain_too_long() -> None:
    assert names.dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]


@pytest.mark.parametrize("value", ["system:controller:x", "compute:apiexport:kubernetes:bind", "A_b", "a..b"])
def test_valid_path_segment_names(value: str) -> None:
    assert names.path_segment_name(value) == []


@pytest.mark.parametrize(
    ("value", "problems"),
    [
        (".", ["may not be '.'"]),
        ("..", ["may not be '..'"]),
        ("a/b", ["may not contain '/'"]),
        ("a/%b", ["may not contain '/'", "may not contain '%'"]),
    ],
)
def test_invalid_path_segment_names(value: str, problems: list[str]) -> None:
    assert names.path_segment_name(value) == problems


def test_label_rejects_dots_with_its_own_message() -> None:
    assert names.dns1123_label("a.b") == ["must not contain dots"]
    assert names.dns1123_label("A") == [LABEL_MSG]
    assert names.dns1123_label("a" * 63) == []
    assert names.dns1123_label("a" * 64) == ["must be no more than 63 characters"]


@pytest.mark.parametrize(
    ("value", "ok"), [("my-name", True), ("abc-123", True), ("1abc", False), ("a.b", False)]
)
def test_dns1035_label(value: str, ok: bool) -> None:
    errs = names.dns1035_label(value)
    assert (errs == []) is ok
    if not ok:
        assert errs[0].startswith(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-'"
        )
        assert errs[0].endswith(
            "(e.g. 'my-name' or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        )


@pytest.mark.parametrize(
    "value",
    ["simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple", "now-with-dashes/simple",
     "example.com/Upper_Case.ok", "A.B_c-d", "a" * 63, "kubernetes.io/" + "a" * 63],
)  # fmt: skip
def test_valid_qualified_names(value: str) -> None:
    assert names.qualified_name(value) == []


NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Foo_", [NAME_PART]),
        ("-x", [NAME_PART]),
        ("", ["name part must be non-empty", NAME_PART]),
        ("x/", ["name part must be non-empty", NAME_PART]),
        ("/x", ["prefix part must be non-empty"]),
        ("Example.com/x", ["prefix part " + SUBDOMAIN_MSG]),
        ("a" * 64, ["name part must be no more than 63 characters"]),
    ],
)
def test_invalid_qualified_names(value: str, expected: list[str]) -> None:
    assert names.qualified_name(value) == expected


def test_qualified_name_with_two_slashes() -> None:
    (msg,) = names.qualified_name("a/b/c")
    assert msg.startswith("a qualified name must consist of alphanumeric characters")
    assert msg.endswith("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")


@pytest.mark.parametrize("value", ["", "simple", "UPPER", "a.b_c-d", "1", "a" * 63])
def test_valid_label_values(value: str) -> None:
    assert names.label_value(value) == []


def test_invalid_label_values() -> None:
    (msg,) = names.label_value("Foo_")
    assert msg == (
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
        "must start and end with an alphanumeric character (e.g. 'MyValue' or 'my_value' or '12345', regex "
        "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )
    assert names.label_value("a" * 64) == ["must be no more than 63 characters"]
    assert names.label_value("a b") != []
    assert names.label_value("a/b") != []


# --- metadata validation (syncflow.devcluster.meta_validation) ----------------------------------


def _causes(errs: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.field, e.reason, e.message) for e in errs]


def test_valid_meta_has_no_causes() -> None:
    meta = {
        "name": "web",
        "namespace": "default",
        "labels": {"app.kubernetes.io/name": "web", "tier": ""},
        "annotations": {"Example.COM/Note": "free text, any length"},
        "finalizers": ["example.com/cleanup", "kubernetes"],
    }
    assert validate_object_meta(meta, namespaced=True) == []


def test_bad_name_is_invalid_with_kube_wording() -> None:
    (err,) = validate_object_meta({"name": "Foo_bar", "namespace": "default"}, namespaced=True)
    assert err.field == "metadata.name"
    assert err.reason == "FieldValueInvalid"
    assert err.message == 'Invalid value: "Foo_bar": ' + SUBDOMAIN_MSG
    assert err.describe().startswith(
        'metadata.name: Invalid value: "Foo_bar": a lowercase RFC 1123 subdomain'
    )


def test_missing_name_and_namespace() -> None:
    assert _causes(validate_object_meta({}, namespaced=True)) == [
        ("metadata.name", "FieldValueRequired", "Required value: name or generateName is required"),
        ("metadata.namespace", "FieldValueRequired", "Required value"),
    ]


def test_namespace_forbidden_on_cluster_scoped_and_checked_as_label() -> None:
    assert _causes(validate_object_meta({"name": "n", "namespace": "x"}, namespaced=False)) == [
        ("metadata.namespace", "FieldValueForbidden", "Forbidden: not allowed on this type"),
    ]
    (err,) = validate_object_meta({"name": "n", "namespace": "a.b"}, namespaced=True)
    assert err.message == 'Invalid value: "a.b": must not contain dots'


def test_generate_name_may_end_with_dash_and_custom_validator() -> None:
    assert validate_object_meta({"generateName": "web-", "name": "web-x7k2p"}, namespaced=False) == []
    errs = validate_object_meta({"generateName": "Web-", "name": "web-1"}, namespaced=False)
    assert [e.field for e in errs] == ["metadata.generateName"]
    errs = validate_object_meta({"name": "a.b"}, namespaced=False, name_validator=names.dns1123_label)
    assert _causes(errs) == [
        ("metadata.name", "FieldValueInvalid", 'Invalid value: "a.b": must not contain dots')
    ]


def test_label_key_and_value_errors() -> None:
    errs = validate_object_meta({"name": "n", "labels": {"Foo_": "ok", "k": "bad value"}}, namespaced=False)
    assert [(e.field, e.message.split(": ")[1]) for e in errs] == [
        ("metadata.labels", '"Foo_"'),
        ("metadata.labels", '"bad value"'),
    ]
    assert errs[0].message == 'Invalid value: "Foo_": ' + NAME_PART


def test_annotation_keys_are_case_insensitive_but_checked() -> None:
    assert validate_object_meta({"name": "n", "annotations": {"A.B/C": "x"}}, namespaced=False) == []
    (err,) = validate_object_meta({"name": "n", "annotations": {"a b": "x"}}, namespaced=False)
    assert (err.field, err.reason) == ("metadata.annotations", "FieldValueInvalid")


def test_annotations_total_size_limit() -> None:
    at_limit = {"k": "v" * (256 * 1024 - 1)}
    assert validate_object_meta({"name": "n", "annotations": at_limit}, namespaced=False) == []
    over = {"k": "v" * (256 * 1024)}
    assert _causes(validate_object_meta({"name": "n", "annotations": over}, namespaced=False)) == [
        ("metadata.annotations", "FieldValueTooLong", "Too long: may not be more than 262144 bytes"),
    ]


def test_generation_finalizers_and_owner_references() -> None:
    meta = {
        "name": "n",
        "generation": -1,
        "finalizers": ["bad/finalizer/name"],
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1", "controller": True},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "", "controller": True},
        ],
    }
    fields = [e.field for e in validate_object_meta(meta, namespaced=False)]
    assert fields == [
        "metadata.generation",
        "metadata.finalizers",
        "metadata.ownerReferences.uid",
        "metadata.ownerReferences",
    ]
