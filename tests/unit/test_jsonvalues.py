"""Deep copies of JSON values (``syncflow.util.jsonvalues``)."""

from __future__ import annotations

from typing import Any

from syncflow.util.jsonvalues import deep_copy


def test_a_copy_is_equal_and_shares_nothing() -> None:
    original: dict[str, Any] = {"metadata": {"labels": {"a": "1"}}, "spec": {"list": [{"n": 1.5}, None]}}
    copied = deep_copy(original)
    assert copied == original
    copied["metadata"]["labels"]["a"] = "2"
    copied["spec"]["list"][0]["n"] = 0
    assert original == {"metadata": {"labels": {"a": "1"}}, "spec": {"list": [{"n": 1.5}, None]}}


def test_values_orjson_refuses_are_copied_all_the_same() -> None:
    big = {"n": 2**70, "nested": [{"m": -(2**65)}]}
    assert deep_copy(big) == big and deep_copy(big)["nested"] is not big["nested"]
    keyed = {1: "integer key"}
    assert deep_copy(keyed) == keyed and deep_copy(keyed) is not keyed
