"""Publish mode's front-end to the engine: each PublishedResource (with its schema) as a sync rule.

The watcher asks ``PublishRules.desired`` every pass; a PublishedResource is ``ready`` once it is
projected, its schema is served by the virtual workspace and its local type exists; ``pending``
(with the reason) before that; absent (so ``gone``) when deleted, deleting or disabled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from syncflow.api.publishedresource import Filter, MutationSpec, PublishedResource
from syncflow.kube import schemas
from syncflow.kube.clients import for_cluster, for_url
from syncflow.kube.crds import storage_version
from syncflow.kube.jsonapi import JsonApi
from syncflow.metrics import record as metrics
from syncflow.modes.publish import source
from syncflow.modes.publish.endpoint import ExportEndpoint
from syncflow.modes.publish.reconcile import PUBLISHED_RESOURCES, SCHEMAS
from syncflow.modes.publish.related import RelatedNotServedError, related_resources
from syncflow.sync.registry import RuleEntry
from syncflow.sync.rule import (
    Mutate,
    NamingPlacement,
    Related,
    Resource,
    Selector,
    Side,
    SyncRule,
    Transform,
)
from syncflow.util.selectors import LabelSelector

Obj = dict[str, Any]
KCP = "kcp"
SERVICE = "service"


def resource_of(spec: Obj) -> Resource:
    """A Resource from a CRD-like spec (a CRD, a synthesised built-in type or an APIResourceSchema)."""
    version = storage_version(spec["versions"])
    return Resource(
        group=spec["group"],
        version=version["name"],
        plural=spec["names"]["plural"],
        kind=spec["names"]["kind"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        status_subresource="status" in (version.get("subresources") or {}),
    )


def selector_of(spec_filter: Filter | None) -> Selector:
    """``spec.filter`` as an engine selector (resource labels, kcp Namespace labels)."""
    if spec_filter is None:
        return Selector()
    dumped = spec_filter.model_dump(by_alias=True, exclude_none=True, mode="json")
    return Selector(
        labels=str(LabelSelector.from_dict(dumped.get("resource"))),
        namespace_labels=str(LabelSelector.from_dict(dumped.get("namespace"))),
    )


def mutate_of(mutation: MutationSpec | None) -> tuple[Transform, ...]:
    """``spec.mutation`` as the rule's transforms (none when it has no steps)."""
    dumped = mutation.model_dump(by_alias=True, exclude_none=True, mode="json") if mutation else {}
    spec, status = tuple(dumped.get("spec") or ()), tuple(dumped.get("status") or ())
    return (Mutate(spec=spec, status=status),) if spec or status else ()


@dataclass(frozen=True)
class RuleSettings:
    """What every publish rule shares: the agent, the state namespace and the orphan policy."""

    agent: str
    state_namespace: str
    orphan_policy: str = "keep"
    sync_enabled: bool = True
    """False with ``--disabled-controllers=sync``: schemas and the APIExport only, no object sync."""


def build_rule(
    published: PublishedResource,
    schema_spec: Obj,
    local_spec: Obj,
    settings: RuleSettings,
    related: tuple[Related, ...] = (),
) -> SyncRule:
    """The sync rule of a projected PublishedResource (``related``: its related resources, discovered)."""
    naming = published.spec.naming
    return SyncRule(
        name=published.name,
        agent=settings.agent,
        source=Side(endpoint=KCP, resource=resource_of(schema_spec)),
        target=Side(endpoint=SERVICE, resource=resource_of(local_spec)),
        selector=selector_of(published.spec.filter),
        placement=NamingPlacement(namespace=naming.namespace, name=naming.name)
        if naming
        else NamingPlacement(),
        transforms=mutate_of(published.spec.mutation),
        unmatched="delete" if settings.orphan_policy == "delete" else "keep",
        state_namespace=settings.state_namespace,
        adopt="merge",  # api-syncagent adopts a local object of the copy's name
        workspace_paths=bool(published.spec.enable_workspace_paths),
        related=related,
    )


def release_rule(schema_spec: Obj, name: str, agent: str) -> SyncRule:
    """A rule that can only release finalizers: its source side is all that matters."""
    resource = resource_of(schema_spec)
    return SyncRule(
        name=name,
        agent=agent,
        source=Side(endpoint=KCP, resource=resource),
        target=Side(endpoint=SERVICE, resource=resource),
    )


@dataclass
class PublishRules:
    """Computes the rules of every served PublishedResource (watch side)."""

    kcp: ApiClient
    service: JsonApi
    selector: str
    settings: RuleSettings
    endpoint: ExportEndpoint | None = None
    _cache: dict[str, tuple[tuple[str, tuple[str, ...]], RuleEntry]] = field(default_factory=dict)

    def desired(self) -> Mapping[str, RuleEntry]:
        """One entry per PublishedResource that is not deleted, deleting or disabled."""
        if not self.settings.sync_enabled:
            return {}
        assert self.endpoint is not None, "resolve the endpoint first"
        query = {"labelSelector": self.selector} if self.selector else {}
        items = self.service.get(PUBLISHED_RESOURCES, **query).get("items") or []
        wanted: dict[str, RuleEntry] = {}
        for obj in items:
            meta = obj["metadata"]
            try:
                published = PublishedResource.parse(obj)
            except ValueError as exc:
                wanted[meta["name"]] = RuleEntry.pending(f"invalid spec: {exc}")
                continue
            if meta.get("deletionTimestamp") or not published.sync_enabled:
                continue
            version = (meta.get("resourceVersion", ""), self.endpoint.urls)
            cached = self._cache.get(meta["name"])
            if cached is None or cached[0] != version or cached[1].state != "ready":
                cached = (version, self._entry(published, obj))
                self._cache[meta["name"]] = cached
            wanted[meta["name"]] = cached[1]
        for name in set(self._cache) - set(wanted):
            del self._cache[name]
        metrics.published_resources(len(wanted))
        return wanted

    def _entry(self, published: PublishedResource, obj: Obj) -> RuleEntry:
        assert self.endpoint is not None
        schema_name = (obj.get("status") or {}).get("resourceSchemaName")
        if not schema_name:
            return RuleEntry.pending("not projected yet (see the PublishedResource's Ready condition)")
        if not self.endpoint.urls:
            return RuleEntry.pending("no virtual workspace URL yet: no workspace binds the APIExport")
        try:
            schema = JsonApi(for_cluster(self.kcp, self.endpoint.export_path)).get(f"{SCHEMAS}/{schema_name}")
            resource = published.spec.resource
            crds = self.service.get(schemas.CRD_PATH)["items"]
            local, _ = source.source_spec(self.service, resource.api_group, resource.kind, crds)
            kcp = JsonApi(for_url(self.kcp, f"{self.endpoint.urls[0]}/clusters/*"))
            related = related_resources(published, kcp.get, self.service.get)
        except RelatedNotServedError as exc:
            return RuleEntry.pending(str(exc))
        except Exception as exc:  # the next pass tries again
            return RuleEntry.pending(f"{type(exc).__name__}: {exc}")
        rule = build_rule(published, schema["spec"], local, self.settings, related)
        remote = rule.source.resource
        for url in self.endpoint.urls:
            if not self._served(url, remote):
                return RuleEntry.pending(
                    f"{remote.group_resource}/{remote.version} is not served by the virtual workspace yet"
                )
        return RuleEntry.ready(rule)

    def _served(self, url: str, resource: Resource) -> bool:
        group_version = (
            f"/apis/{resource.group}/{resource.version}" if resource.group else f"/api/{resource.version}"
        )
        try:
            listing = JsonApi(for_url(self.kcp, f"{url}/clusters/*")).get(group_version)
        except ApiException:
            return False
        return resource.plural in {r["name"] for r in listing.get("resources") or []}
