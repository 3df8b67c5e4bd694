"""Sync rules: the engine's only input. Each mode turns its API objects into these (DESIGN §1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from syncflow.kube.jsonapi import resource_path
from syncflow.sync.naming import NamingRule

OrphanPolicy = Literal["keep", "delete"]


@dataclass(frozen=True)
class Resource:
    """One side's resource: where its objects live and what they look like."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    status_subresource: bool

    @property
    def api_version(self) -> str:
        """``group/version`` (``version`` for the core group)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str = "", name: str = "") -> str:
        """The collection (``name`` empty) or object path; all namespaces when ``namespace`` is empty."""
        return resource_path(
            self.group, self.version, self.plural, namespace if self.namespaced else "", name
        )


@dataclass(frozen=True)
class SyncRule:
    """Which upstream objects map to which downstream objects, and how."""

    name: str
    remote: Resource
    local: Resource
    naming: NamingRule
    filter: dict[str, Any] | None
    workspace_paths: bool
    agent: str
    state_namespace: str
    orphan_policy: OrphanPolicy = "keep"
