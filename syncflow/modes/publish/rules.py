"""Publish mode's front-end to the engine: a PublishedResource (with its schema) as a SyncRule."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.api.publishedresource import PublishedResource
from syncflow.modes.publish import source
from syncflow.modes.publish.reconcile import PUBLISHED_RESOURCES, SCHEMAS, PublishTarget
from syncflow.sync.naming import NamingRule
from syncflow.sync.rule import OrphanPolicy, Resource, SyncRule

Obj = dict[str, Any]


def _storage_version(versions: list[Obj]) -> Obj:
    return next((v for v in versions if v.get("storage")), versions[0])


def resource_of(spec: Obj) -> Resource:
    """A Resource from a CRD-like spec (a CRD, a synthesised built-in type or an APIResourceSchema)."""
    version = _storage_version(spec["versions"])
    return Resource(
        group=spec["group"],
        version=version["name"],
        plural=spec["names"]["plural"],
        kind=spec["names"]["kind"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        status_subresource="status" in (version.get("subresources") or {}),
    )


def build_rule(
    target: PublishTarget, obj: Obj, state_namespace: str, orphan_policy: OrphanPolicy
) -> SyncRule | None:
    """The sync rule of a PublishedResource, or None if it does not sync (not ready, disabled, deleting)."""
    published = PublishedResource.parse(obj)
    schema_name = (obj.get("status") or {}).get("resourceSchemaName")
    if not schema_name or not published.sync_enabled or obj["metadata"].get("deletionTimestamp"):
        return None
    schema = target.export_workspace.get(f"{SCHEMAS}/{schema_name}")
    resource = published.spec.resource
    crds = target.service.get(source.CRD_PATH)["items"]
    local, _ = source.source_spec(target.service, resource.api_group, resource.kind, crds)
    naming = published.spec.naming
    spec_filter = published.spec.filter
    return SyncRule(
        name=published.name,
        remote=resource_of(schema["spec"]),
        local=resource_of(local),
        naming=NamingRule(naming.namespace if naming else None, naming.name if naming else None),
        filter=spec_filter.model_dump(by_alias=True, exclude_none=True, mode="json") if spec_filter else None,
        workspace_paths=bool(published.spec.enable_workspace_paths),
        agent=target.agent_name,
        state_namespace=state_namespace,
        orphan_policy=orphan_policy,
    )


@dataclass
class RuleCache:
    """Sync rules by PublishedResource name, rebuilt after ``ttl`` seconds so edits take effect."""

    ttl: float = 5.0
    _rules: dict[str, tuple[float, SyncRule | None]] = field(default_factory=dict)

    def get(
        self, target: PublishTarget, name: str, state_namespace: str, orphan_policy: OrphanPolicy
    ) -> SyncRule | None:
        """The rule of PublishedResource ``name`` (None when it is gone or does not sync)."""
        cached = self._rules.get(name)
        if cached is not None and time.monotonic() - cached[0] < self.ttl:
            return cached[1]
        try:
            obj = target.service.get(f"{PUBLISHED_RESOURCES}/{name}")
        except ApiException as exc:
            if exc.status != 404:
                raise
            rule = None
        else:
            rule = build_rule(target, obj, state_namespace, orphan_policy)
        self._rules[name] = (time.monotonic(), rule)
        return rule
