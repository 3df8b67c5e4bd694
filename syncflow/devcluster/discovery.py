"""Discovery documents: /version, /api, /apis and the per group-version resource lists."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from typing import Any

from syncflow.devcluster.resources import ResourceType, group_versions

KUBERNETES_VERSION = {"major": "1", "minor": "34", "gitVersion": "v1.34.0-devcluster"}


def version_info() -> dict[str, Any]:
    """The /version document."""
    return {
        **KUBERNETES_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-25T00:00:00Z",
        "goVersion": "go1.24",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def api_versions(server_address: str) -> dict[str, Any]:
    """The /api document (core group versions)."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(types: Iterable[ResourceType]) -> dict[str, Any]:
    """The /apis document: every non-core group with its versions."""
    groups = [_group(g, vs) for g, vs in group_versions(types).items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(types: Iterable[ResourceType], group: str) -> dict[str, Any] | None:
    """The /apis/<group> document, or None if the group is not served."""
    versions = group_versions(types).get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(group, versions)}


def _storage_version_hash(rtype: ResourceType) -> str:
    digest = hashlib.sha256(f"{rtype.group}/{rtype.versions[0]}/{rtype.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _subresource_entry(
    rtype: ResourceType, name: str, verbs: list[str], group: str = "", version: str = "", kind: str = ""
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": f"{rtype.plural}/{name}",
        "singularName": "",
        "namespaced": rtype.namespaced,
    }
    if kind:
        entry.update({"group": group, "version": version, "kind": kind})
    else:
        entry["kind"] = rtype.kind
    entry["verbs"] = verbs
    return entry


def resource_entries(rtype: ResourceType) -> list[dict[str, Any]]:
    """APIResource entries for one type: the resource and its subresources."""
    entry: dict[str, Any] = {
        "name": rtype.plural,
        "singularName": rtype.singular,
        "namespaced": rtype.namespaced,
        "kind": rtype.kind,
        "verbs": list(rtype.verbs),
        "storageVersionHash": _storage_version_hash(rtype),
    }
    if rtype.short_names:
        entry["shortNames"] = list(rtype.short_names)
    if rtype.categories:
        entry["categories"] = list(rtype.categories)
    entries = [entry]
    sub_verbs = ["get", "patch", "update"]
    if rtype.status_subresource:
        entries.append(_subresource_entry(rtype, "status", sub_verbs))
    if rtype.scale is not None:
        entries.append(_subresource_entry(rtype, "scale", sub_verbs, "autoscaling", "v1", "Scale"))
    for sub in rtype.subresources:
        entries.append(_subresource_entry(rtype, sub.name, list(sub.verbs), sub.group, sub.version, sub.kind))
    return entries


def resource_list(types: Iterable[ResourceType], group: str, version: str) -> dict[str, Any] | None:
    """The APIResourceList of one group-version, or None if it is not served."""
    types = [t for t in types if t.group == group and version in t.versions]
    if not types:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": [e for t in types for e in resource_entries(t)],
    }
