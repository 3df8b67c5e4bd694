"""The state store Secrets, byte-compatible with api-syncagent's (Go encoding/json, SHA-1)."""

from __future__ import annotations

import base64
import hashlib
import json

from syncflow.sync import metadata as md
from syncflow.sync.state import (
    encode_state,
    go_json,
    read_state,
    state_key,
    state_secret,
    state_secret_name,
)


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


CONTENT = {
    "apiVersion": "remote.example.corp/v1alpha1",
    "kind": "RemoteThing",
    "metadata": {"name": "my-test-thing"},
    "spec": {"username": "Miss Scarlet"},
}


def test_secret_name_hashes_the_sorted_identity_as_go_encodes_it() -> None:
    line = (
        '{"apiVersion":"remote.example.corp/v1alpha1","kind":"RemoteThing",'
        '"name":"my-test-thing","namespace":"team-a"}\n'
    )
    name = state_secret_name(
        "testcluster", "remote.example.corp/v1alpha1", "RemoteThing", "team-a", "my-test-thing"
    )
    assert name == "obj-state-testcluster-" + sha1(line)[:20]
    assert len(name) == len("obj-state-testcluster-") + 20


def test_secret_name_of_a_cluster_scoped_object_keeps_the_empty_namespace() -> None:
    line = '{"apiVersion":"v1","kind":"K","name":"n","namespace":""}\n'
    assert state_secret_name("c", "v1", "K", "", "n") == "obj-state-c-" + sha1(line)[:20]


def test_state_key_uses_go_struct_field_order() -> None:
    line = '{"ClusterName":"testcluster","WorkspacePath":"","Namespace":"team-a","Name":"my-test-thing"}\n'
    assert state_key("testcluster", "", "team-a", "my-test-thing") == sha1(line)
    assert state_key("testcluster", "root:org", "team-a", "my-test-thing") != sha1(line)


def test_go_json_is_compact_sorted_and_html_escaped() -> None:
    text = go_json({"b": "<a&b>", "a": [1, None, True], "u": "é\u2028"})
    assert text == '{"a":[1,null,true],"b":"\\u003ca\\u0026b\\u003e","u":"é\\u2028"}'
    assert json.loads(text)["b"] == "<a&b>"


def test_state_secret_format() -> None:
    key = state_key("c1", "", "team-a", "my-test-thing")
    secret = state_secret(
        "kcp-system",
        "c1",
        "remote.example.corp/v1alpha1",
        "RemoteThing",
        "team-a",
        "my-test-thing",
        {key: CONTENT},
    )
    assert secret["metadata"] == {
        "name": state_secret_name(
            "c1", "remote.example.corp/v1alpha1", "RemoteThing", "team-a", "my-test-thing"
        ),
        "namespace": "kcp-system",
        "labels": {
            md.REMOTE_CLUSTER_LABEL: "c1",
            md.REMOTE_NAME_HASH_LABEL: "c346c8ceb5d104cc783d09b95e8ea7032c190948",
            md.REMOTE_NAMESPACE_HASH_LABEL: sha1("team-a"),
            "syncagent.kcp.io/object-state": "true",
        },
    }
    assert (secret["apiVersion"], secret["kind"]) == ("v1", "Secret")
    assert base64.b64decode(secret["data"][key]).decode() == (
        '{"apiVersion":"remote.example.corp/v1alpha1","kind":"RemoteThing",'
        '"metadata":{"name":"my-test-thing"},"spec":{"username":"Miss Scarlet"}}'
    )


def test_state_secret_of_a_cluster_scoped_object_has_no_namespace_hash() -> None:
    secret = state_secret("ns", "c1", "v1", "K", "", "n", {})
    assert md.REMOTE_NAMESPACE_HASH_LABEL not in secret["metadata"]["labels"]
    assert secret["data"] == {}


def test_read_state_round_trip() -> None:
    secret = {"data": {"k": encode_state(CONTENT), "other": encode_state({"x": 1})}}
    assert read_state(secret, "k") == CONTENT
    assert read_state(secret, "missing") is None
    assert read_state(None, "k") is None
    assert read_state({"data": None}, "k") is None


def test_read_state_of_broken_data_is_none() -> None:
    assert read_state({"data": {"k": "!!not base64"}}, "k") is None
    assert read_state({"data": {"k": base64.b64encode(b"{broken").decode()}}, "k") is None
    assert read_state({"data": {"k": base64.b64encode(b"[1]").decode()}}, "k") is None
