"""Name validators: the wording and limits of apimachinery's util/validation."""

from __future__ import annotations

import pytest

from syncflow import names

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
