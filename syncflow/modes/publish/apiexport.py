"""The one APIExport syncflow manages: which schemas it lists and which permission claims it makes.

Merging never loses anything: a ready schema replaces the entry of its group-resource, entries we do
not own (and those of deleted PublishedResources) stay; claims are only ever added.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from syncflow.sync.metadata import AGENT_LABEL

Obj = dict[str, Any]

EVENTS_CLAIM: Obj = {"group": "", "resource": "events"}
NAMESPACES_CLAIM: Obj = {"group": "", "resource": "namespaces"}
LOGICAL_CLUSTERS_CLAIM: Obj = {"group": "core.kcp.io", "resource": "logicalclusters"}


def schema_group_resource(schema_name: str) -> str:
    """``<plural>.<group>`` of a schema named ``<prefix>.<plural>.<group>``."""
    return schema_name.split(".", 1)[1]


def merge_schemas(current: Iterable[str], ready: Iterable[str]) -> list[str]:
    """``current`` with each ready schema replacing the entry of its group-resource; sorted."""
    merged = {schema_group_resource(name): name for name in current}
    merged.update({schema_group_resource(name): name for name in ready})
    return [merged[group_resource] for group_resource in sorted(merged)]


def _claim_key(claim: Obj) -> tuple[str, str, str]:
    return claim.get("group", ""), claim.get("resource", ""), claim.get("identityHash", "")


def merge_claims(current: Iterable[Obj], wanted: Iterable[Obj]) -> list[Obj]:
    """``current`` plus every wanted claim it lacks (as ``all: true``); sorted by group, then resource."""
    merged = {_claim_key(c): c for c in current}
    for claim in wanted:
        merged.setdefault(_claim_key(claim), {**claim, "all": True})
    return [merged[key] for key in sorted(merged)]


def _related_resource(related: Obj) -> tuple[str, str]:
    """(group, resource) of a related resource on the kcp side."""
    if related.get("kind") and not related.get("resource"):
        return "", related["kind"].lower() + "s"
    if related.get("origin") == "service":
        projection = related.get("projection") or {}
        group = projection.get("group", related.get("group", ""))
        return group or "", projection.get("resource") or related.get("resource", "")
    return related.get("group", "") or "", related.get("resource", "")


def wanted_claims(published: Iterable[Obj], exported: set[tuple[str, str]]) -> list[Obj]:
    """Claims the export needs for these PublishedResource specs; ``exported`` = its (group, plural)s."""
    claims: list[Obj] = [EVENTS_CLAIM]
    specs = list(published)
    if any((s.get("filter") or {}).get("namespace") or s.get("related") for s in specs):
        claims.append(NAMESPACES_CLAIM)
    if any(s.get("enableWorkspacePaths") for s in specs):
        claims.append(LOGICAL_CLUSTERS_CLAIM)
    for spec in specs:
        for related in spec.get("related") or []:
            group, resource = _related_resource(related)
            if (group, resource) in exported:
                continue
            claim = {"group": group, "resource": resource}
            if related.get("identityHash"):
                claim["identityHash"] = related["identityHash"]
            claims.append(claim)
    return claims


def export_patch(
    export: Obj, ready_schemas: Iterable[str], claims: Iterable[Obj], agent_name: str
) -> Obj | None:
    """The merge patch that brings ``export`` up to date, or None when it already is."""
    spec = export.get("spec") or {}
    schemas = merge_schemas(spec.get("latestResourceSchemas") or [], ready_schemas)
    permission_claims = merge_claims(spec.get("permissionClaims") or [], claims)
    patch: Obj = {}
    if schemas != (spec.get("latestResourceSchemas") or []):
        patch.setdefault("spec", {})["latestResourceSchemas"] = schemas
    if permission_claims != (spec.get("permissionClaims") or []):
        patch.setdefault("spec", {})["permissionClaims"] = permission_claims
    if (export["metadata"].get("annotations") or {}).get(AGENT_LABEL) != agent_name:
        patch["metadata"] = {"annotations": {AGENT_LABEL: agent_name}}
    if patch:
        patch.setdefault("metadata", {})["resourceVersion"] = export["metadata"]["resourceVersion"]
    return patch or None
