"""The object-key grammar (docs/architecture.md §4): round trip and rejection of malformed keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncflow.queue.keys import InvalidKeyError, ObjectKey

_PART_CHARS = st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="/%")
parts = st.text(_PART_CHARS, min_size=1, max_size=40)
verbs = st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True)
keys = st.builds(ObjectKey, verbs, parts, parts, st.one_of(st.just(""), parts), parts)


@given(keys)
def test_round_trip(key: ObjectKey) -> None:
    assert ObjectKey.parse(str(key)) == key
    assert str(ObjectKey.parse(str(key))) == str(key)


def test_shape_and_cluster_scoped_objects() -> None:
    key = ObjectKey.parse("sync/certificates.cert-manager.io/root:org:team//my-cluster-issuer")
    assert (key.verb, key.rule, key.cluster, key.namespace, key.name) == (
        "sync",
        "certificates.cert-manager.io",
        "root:org:team",
        "",
        "my-cluster-issuer",
    )
    assert key.task_name == "syncflow.sync"


@pytest.mark.parametrize(
    "text",
    [
        "sync/rule/cluster/ns",  # four parts
        "sync/rule/cluster/ns/name/extra",  # six parts
        "Sync/rule/cluster/ns/name",  # verb must be lower case
        "sync//cluster/ns/name",  # empty rule
        "sync/rule//ns/name",  # empty cluster
        "sync/rule/cluster/ns/",  # empty name
        "sync/rule/cluster/ns/na me",  # space
        "sync/rule/cluster/ns/100%",  # percent
        "sync/rule/cluster/ns/naïve",  # not ASCII
    ],
)
def test_malformed_keys_are_rejected(text: str) -> None:
    with pytest.raises(InvalidKeyError):
        ObjectKey.parse(text)


def test_keys_order_and_hash_like_values() -> None:
    a = ObjectKey.parse("sync/r/c/ns/a")
    assert a == ObjectKey("sync", "r", "c", "ns", "a")
    assert len({a, ObjectKey.parse(str(a))}) == 1
    assert a < ObjectKey.parse("sync/r/c/ns/b")
