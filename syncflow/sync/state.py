"""The last-applied state store: Secrets in api-syncagent's format, so either agent reads the other's.

One Secret per kcp primary object, ``obj-state-<cluster>-<short hash>``, in the agent's namespace on
the service cluster; ``data[<object key hash>]`` holds the compact JSON of the managed content.
Hashes follow api-syncagent's: SHA-1 hex over Go's ``json.Encoder`` output (trailing newline
included). Pure functions; the sync task reads and writes the Secret.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from syncflow.sync import metadata as md
from syncflow.sync.naming import sha1_hex

_SHORT_HASH = 20
# Go's encoding/json escapes these inside strings (HTML safety, JavaScript line separators).
_GO_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def go_json(value: Any, *, sort_keys: bool = True) -> str:
    """Compact JSON as Go's ``encoding/json`` writes it: sorted map keys, HTML characters escaped.

    ``sort_keys=False`` keeps the given order, for Go structs (fields in declaration order).
    Floats use Python's shortest form, which can differ from Go's (e.g. ``1e-05`` vs ``0.00001``);
    both parse back to the same value.
    """
    text = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)
    return text.translate(_GO_ESCAPES)


def _go_hash(value: Any, *, sort_keys: bool = True) -> str:
    """api-syncagent's ``crypto.Hash`` of a non-string: SHA-1 of the encoder's line."""
    return sha1_hex(go_json(value, sort_keys=sort_keys) + "\n")


def state_secret_name(cluster: str, api_version: str, kind: str, namespace: str, name: str) -> str:
    """``obj-state-<cluster>-<hash>`` for kcp object ``namespace/name`` of kcp GVK ``api_version, kind``.

    api-syncagent hashes a Go map, so the JSON keys are sorted: apiVersion, kind, name, namespace
    (namespace "" for cluster-scoped objects).
    """
    identity = {"apiVersion": api_version, "kind": kind, "name": name, "namespace": namespace}
    return f"obj-state-{cluster}-{_go_hash(identity)[:_SHORT_HASH]}"


def state_key(cluster: str, workspace_path: str, namespace: str, name: str) -> str:
    """The ``data`` key of an object's state: SHA-1 of Go's objectKey struct in field order.

    api-syncagent always builds this key with an empty workspace path; pass "" to stay compatible.
    """
    key = {"ClusterName": cluster, "WorkspacePath": workspace_path, "Namespace": namespace, "Name": name}
    return _go_hash(key, sort_keys=False)


def state_labels(cluster: str, namespace: str, name: str) -> dict[str, str]:
    """The labels of a state Secret: the remote-object cluster and hash labels, and the state marker."""
    labels = {md.REMOTE_CLUSTER_LABEL: cluster, md.REMOTE_NAME_HASH_LABEL: sha1_hex(name)}
    if namespace:
        labels[md.REMOTE_NAMESPACE_HASH_LABEL] = sha1_hex(namespace)
    labels[md.STATE_SECRET_LABEL] = "true"
    return labels


def encode_state(content: Mapping[str, Any]) -> str:
    """A Secret ``data`` value: base64 of the compact JSON of ``content``."""
    return base64.b64encode(go_json(content).encode()).decode()


def state_secret(
    namespace: str,
    cluster: str,
    api_version: str,
    kind: str,
    obj_namespace: str,
    obj_name: str,
    entries: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """The state Secret in ``namespace`` for a kcp object, holding ``entries`` (state key -> content)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": state_secret_name(cluster, api_version, kind, obj_namespace, obj_name),
            "namespace": namespace,
            "labels": state_labels(cluster, obj_namespace, obj_name),
        },
        "type": "Opaque",
        "data": {key: encode_state(content) for key, content in entries.items()},
    }


def read_state(secret: Mapping[str, Any] | None, key: str) -> dict[str, Any] | None:
    """The content stored under ``key``; None when missing or unreadable (then a full update follows)."""
    raw = ((secret or {}).get("data") or {}).get(key)
    if not isinstance(raw, str):
        return None
    try:
        content = json.loads(base64.b64decode(raw, validate=True))
    except (binascii.Error, ValueError):
        return None
    return content if isinstance(content, dict) else None
