"""Object references as a watch reports them: logical cluster, namespace, name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CLUSTER_ANNOTATION = "kcp.io/cluster"


@dataclass(frozen=True, order=True)
class ObjectRef:
    """One object; ``cluster`` is its ``kcp.io/cluster`` annotation ("" outside kcp)."""

    cluster: str
    namespace: str
    name: str

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> ObjectRef:
        """The reference of an object as listed or watched."""
        meta = obj.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        return cls(annotations.get(CLUSTER_ANNOTATION, ""), meta.get("namespace", ""), meta["name"])

    def encode(self) -> str:
        """``cluster/namespace/name`` (none of the parts can contain a slash)."""
        return f"{self.cluster}/{self.namespace}/{self.name}"

    @classmethod
    def decode(cls, text: str) -> ObjectRef:
        """The inverse of ``encode``."""
        cluster, namespace, name = text.split("/")
        return cls(cluster, namespace, name)
