"""The publish-mode control plane: PublishedResource → APIResourceSchema, and the APIExport merge.

Both reconcilers are level-triggered: they read the current PublishedResources, CRDs and APIExport
and make kcp match. Problems with a PublishedResource become its ``Ready=False`` condition (the
watcher re-enqueues it when the CRD or the PublishedResource changes), never a crash loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.api.conditions import set_condition
from syncflow.api.publishedresource import PublishedResource, PublishedResourceError
from syncflow.kube import schemas
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.publish import apiexport, projection, source
from syncflow.modes.publish.projection import ProjectionError
from syncflow.sync.metadata import AGENT_LABEL
from syncflow.sync.naming import NamingRule
from syncflow.templating import TemplateError
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.publish")

Obj = dict[str, Any]
PUBLISHED_RESOURCES = "/apis/syncagent.kcp.io/v1alpha1/publishedresources"
SCHEMAS = "/apis/apis.kcp.io/v1alpha1/apiresourceschemas"
EXPORTS = "/apis/apis.kcp.io/v1alpha1/apiexports"
RELEASE_FINALIZER = "syncflow.kcp.io/release-objects"
"""Held on PublishedResources so their deletion first releases the kcp objects' finalizers."""


@dataclass(frozen=True)
class PublishTarget:
    """What a reconcile talks to: the service cluster, the export's workspace and the agent's identity."""

    service: JsonApi
    export_workspace: JsonApi
    export_name: str
    agent_name: str
    selector: str = ""


def list_published(target: PublishTarget) -> list[Obj]:
    """The PublishedResources this agent serves (``--published-resource-selector``)."""
    query = {"labelSelector": target.selector} if target.selector else {}
    items: list[Obj] = target.service.get(PUBLISHED_RESOURCES, **query).get("items") or []
    return items


def _set_status(
    target: PublishTarget, obj: Obj, schema: str | None, ok: bool, reason: str, message: str
) -> None:
    old = obj.get("status") or {}
    status = {
        **old,
        "conditions": set_condition(
            old.get("conditions"), "Ready", ok, reason, message, int(obj["metadata"].get("generation", 0))
        ),
    }
    if schema:
        status["resourceSchemaName"] = schema
    if status != old:
        target.service.merge_patch(
            f"{PUBLISHED_RESOURCES}/{obj['metadata']['name']}/status", {"status": status}
        )


def _projection_conflict(target: PublishTarget, obj: Obj, group_resource: tuple[str, str]) -> str | None:
    """The name of an older PublishedResource that already projects to the same group/resource."""
    mine = (obj["metadata"].get("creationTimestamp", ""), obj["metadata"]["name"])
    for other in list_published(target):
        theirs = (other["metadata"].get("creationTimestamp", ""), other["metadata"]["name"])
        schema = (other.get("status") or {}).get("resourceSchemaName")
        if theirs >= mine or not schema or other["metadata"].get("deletionTimestamp"):
            continue
        _, plural, group = schema.split(".", 2)
        if (("" if group == "core" else group), plural) == group_resource:
            return str(other["metadata"]["name"])
    return None


def _publish_schema(target: PublishTarget, schema: Obj) -> None:
    """Create the schema if missing; fix the agent label of an existing one (schemas are immutable)."""
    try:
        target.export_workspace.create(SCHEMAS, schema)
    except ApiException as exc:
        if exc.status != 409:
            raise
        existing = target.export_workspace.get(f"{SCHEMAS}/{schema['metadata']['name']}")
        labels = existing["metadata"].get("labels") or {}
        if labels.get(AGENT_LABEL) != target.agent_name:
            target.export_workspace.merge_patch(
                f"{SCHEMAS}/{schema['metadata']['name']}",
                {
                    "metadata": {
                        "labels": schema["metadata"]["labels"],
                        "annotations": schema["metadata"]["annotations"],
                    }
                },
            )


def _set_release_finalizer(target: PublishTarget, obj: Obj, present: bool) -> None:
    finalizers = [f for f in obj["metadata"].get("finalizers") or [] if f != RELEASE_FINALIZER]
    if present:
        finalizers.append(RELEASE_FINALIZER)
    if finalizers != (obj["metadata"].get("finalizers") or []):
        target.service.merge_patch(
            f"{PUBLISHED_RESOURCES}/{obj['metadata']['name']}",
            {
                "metadata": {
                    "finalizers": finalizers or None,
                    "resourceVersion": obj["metadata"]["resourceVersion"],
                }
            },
        )


def reconcile_projection(
    target: PublishTarget, name: str, enqueue_export: Callable[[], object], release: Callable[[str], int]
) -> None:
    """Project one PublishedResource into an APIResourceSchema and record the outcome on it.

    ``release(schema_name)`` removes our finalizer from every kcp object of a schema; it runs when
    the PublishedResource is deleted or its sync is disabled, so users' deletions never hang.
    """
    try:
        obj = target.service.get(f"{PUBLISHED_RESOURCES}/{name}")
    except ApiException as exc:
        if exc.status == 404:
            return  # deleted: its schema stays in the APIExport, as api-syncagent does
        raise
    schema_name = (obj.get("status") or {}).get("resourceSchemaName")
    if obj["metadata"].get("deletionTimestamp"):
        if schema_name:
            log_event(logger, "publish.released", publishedresource=name, objects=release(schema_name))
        _set_release_finalizer(target, obj, present=False)
        return
    if RELEASE_FINALIZER not in (obj["metadata"].get("finalizers") or []):
        _set_release_finalizer(target, obj, present=True)
        obj = target.service.get(f"{PUBLISHED_RESOURCES}/{name}")
    if schema_name and ((obj.get("spec") or {}).get("synchronization") or {}).get("enabled") is False:
        released = release(schema_name)
        if released:
            log_event(logger, "publish.released", publishedresource=name, objects=released)
    try:
        published = PublishedResource.parse(obj)
        naming = published.spec.naming
        NamingRule(naming.namespace if naming else None, naming.name if naming else None)
        resource = published.spec.resource
        spec, generation = source.source_spec(
            target.service, resource.api_group, resource.kind, target.service.get(schemas.CRD_PATH)["items"]
        )
        dumped = published.model_dump(by_alias=True, exclude_none=True, mode="json")["spec"]
        projected = projection.project(spec, dumped["resource"], dumped.get("projection"))
        owner = _projection_conflict(target, obj, projection.projected_group_resource(projected))
        if owner is not None:
            raise ProjectionError(
                "ProjectionConflict",
                f"{projected['names']['plural']}.{projected['group']} is already published by "
                f"PublishedResource {owner!r}; change spec.projection (group, kind or plural) of one of them",
            )
        schema = projection.api_resource_schema(projected, target.agent_name, generation)
        _publish_schema(target, schema)
    except PublishedResourceError as exc:
        _set_status(target, obj, None, False, "InvalidSpec", str(exc))
    except TemplateError as exc:
        _set_status(target, obj, None, False, "InvalidNamingTemplate", f"spec.naming: {exc}")
    except ProjectionError as exc:
        _set_status(target, obj, None, False, exc.reason, exc.message)
    else:
        schema_name = schema["metadata"]["name"]
        _set_status(
            target, obj, schema_name, True, "SchemaPublished", f"published as APIResourceSchema {schema_name}"
        )
        log_event(logger, "publish.schema_ready", publishedresource=name, schema=schema_name)
        enqueue_export()
        return
    log_event(
        logger,
        "publish.not_ready",
        level=logging.WARNING,
        publishedresource=name,
        reason=(obj.get("status") or {}).get("conditions", [{}])[-1].get("reason", ""),
    )


def reconcile_export(target: PublishTarget) -> None:
    """Merge every ready schema and the permission claims they need into the APIExport."""
    ready: list[str] = []
    specs: list[Obj] = []
    for obj in list_published(target):
        if obj["metadata"].get("deletionTimestamp"):
            continue
        schema = (obj.get("status") or {}).get("resourceSchemaName")
        if schema:
            ready.append(schema)
        specs.append(obj.get("spec") or {})
    export = target.export_workspace.get(f"{EXPORTS}/{target.export_name}")
    merged = apiexport.merge_schemas((export.get("spec") or {}).get("latestResourceSchemas") or [], ready)
    exported = set()
    for name in merged:
        _, plural, group = name.split(".", 2)
        exported.add((("" if group == "core" else group), plural))
    patch = apiexport.export_patch(export, ready, apiexport.wanted_claims(specs, exported), target.agent_name)
    if patch is not None:
        target.export_workspace.merge_patch(f"{EXPORTS}/{target.export_name}", patch)
        log_event(
            logger,
            "publish.apiexport_updated",
            apiexport=target.export_name,
            schemas=len(merged),
            changed=",".join(sorted(patch.get("spec", {}))) or "metadata",
        )
