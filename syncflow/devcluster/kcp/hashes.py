"""The names and hashes kcp derives: logical-cluster names, identity hashes, export and claim labels."""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

CLUSTER_ANNOTATION = "kcp.io/cluster"
PATH_ANNOTATION = "kcp.io/path"
EXPORT_LABEL = "internal.apis.kcp.io/export"
CLAIM_LABEL_PREFIX = "claimed.internal.apis.kcp.io/"


def _encode(number: int, alphabet: str) -> str:
    base = len(alphabet)
    if number == 0:
        return alphabet[0]
    digits = []
    while number:
        number, rest = divmod(number, base)
        digits.append(alphabet[rest])
    return "".join(reversed(digits))


def base62(data: bytes) -> str:
    """Big-endian base62 (Go's ``big.Int.Text(62)`` alphabet), as kcp labels use it."""
    return _encode(int.from_bytes(data, "big"), _BASE62)


def random_cluster_name() -> str:
    """A new logical-cluster name: the first 16 base36 characters of a random SHA-224."""
    digest = hashlib.sha224(secrets.token_bytes(32)).digest()
    return _encode(int.from_bytes(digest, "big"), _BASE36)[:16]


def identity_hash(key: bytes) -> str:
    """An APIExport's ``status.identityHash``: hex SHA-256 of its identity key."""
    return hashlib.sha256(key).hexdigest()


def export_hash(export_cluster: str, export_name: str) -> str:
    """The value of ``internal.apis.kcp.io/export`` and the suffix of claim label keys."""
    return base62(hashlib.sha224(f"{export_cluster}:{export_name}".encode()).digest())


def claim_hash(group: str, resource: str, identity: str = "") -> str:
    """The claim label value: base62 SHA-224 of the claim's JSON as Go marshals it (verbs null)."""
    claim: dict[str, Any] = {}
    if group:
        claim["group"] = group
    claim["resource"] = resource
    claim["verbs"] = None
    if identity:
        claim["identityHash"] = identity
    return base62(hashlib.sha224(json.dumps(claim, separators=(",", ":")).encode()).digest())


def claim_label(export_cluster: str, export_name: str) -> str:
    """The claim label key an export's accepted claims put on objects."""
    return CLAIM_LABEL_PREFIX + export_hash(export_cluster, export_name)
