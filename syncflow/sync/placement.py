"""Where the copy of a source object goes on the target: namespace, name and the namespace to create.

Three placements (see ``rule.Placement``): naming templates (publish mode), the TMC syncer's
namespace mapping ``kcp-<hash>`` with a locator annotation, and identity (optionally renaming
single objects). Pure functions; the reconciler does the I/O.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from syncflow.sync.naming import NamingRule
from syncflow.sync.rule import IdentityPlacement, NamespaceMapping, NamingPlacement, Placement

Obj = dict[str, Any]

_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_MAPPED_HASH_LENGTH = 12


@dataclass(frozen=True)
class Location:
    """The target namespace ("" when cluster-scoped) and name, and the Namespace to create if missing."""

    namespace: str
    name: str
    namespace_object: Obj | None = None


@functools.lru_cache(maxsize=256)
def _naming(namespace: str | None, name: str | None) -> NamingRule:
    return NamingRule(namespace, name)


def naming_rule(placement: NamingPlacement) -> NamingRule:
    """The compiled naming templates (compiled once per process; raises ``TemplateError``)."""
    return _naming(placement.namespace, placement.name)


def base36(digest: bytes) -> str:
    """Base36 of a byte string as github.com/martinlindhe/base36 encodes it (a "0" per leading zero byte)."""
    number = int.from_bytes(digest, "big")
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = _BASE36[rest] + out
    return "0" * (len(digest) - len(digest.lstrip(b"\0"))) + out


def locator_json(mapping: NamespaceMapping, cluster: str, namespace: str) -> str:
    """The locator of a mapped namespace as Go's encoding/json writes it: fixed fields, cluster, namespace."""
    locator = {**mapping.locator, "cluster": cluster, "namespace": namespace}
    return json.dumps(locator, separators=(",", ":"))


def mapped_namespace(mapping: NamespaceMapping, cluster: str, namespace: str) -> str:
    """``<prefix><first 12 base36 digits of SHA-224 of the locator JSON>``."""
    digest = hashlib.sha224(locator_json(mapping, cluster, namespace).encode()).digest()
    return mapping.prefix + base36(digest)[:_MAPPED_HASH_LENGTH]


def locate(
    placement: Placement,
    obj: Mapping[str, Any],
    cluster: str,
    cluster_path: str,
    *,
    target_namespaced: bool,
) -> Location:
    """Where the copy of source object ``obj`` (in logical cluster ``cluster``) goes."""
    meta = obj.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    if isinstance(placement, NamingPlacement):
        target_ns, target_name = naming_rule(placement).render(
            obj, cluster, cluster_path, local_namespaced=target_namespaced
        )
        return Location(target_ns, target_name)
    if isinstance(placement, NamespaceMapping):
        if not target_namespaced:
            return Location("", name)
        mapped = mapped_namespace(placement, cluster, namespace)
        annotations = {placement.locator_annotation: locator_json(placement, cluster, namespace)}
        return Location(mapped, name, {"metadata": {"name": mapped, "annotations": annotations}})
    assert isinstance(placement, IdentityPlacement)
    return Location(namespace if target_namespaced else "", placement.names.get(name, name))
