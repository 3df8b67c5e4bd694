"""What an endpoint serves: a resource type found by plural or kind in its discovery documents."""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi
from syncflow.sync.rule import Resource


def find_resource(
    api: JsonApi, group: str, version: str, *, plural: str | None = None, kind: str | None = None
) -> Resource | None:
    """The resource of ``group/version`` with that plural (or kind) as ``api`` serves it, or None."""
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    try:
        listing = api.get(path)
    except ApiException as exc:
        if exc.status in (404, 503):
            return None
        raise
    entries = {entry["name"]: entry for entry in listing.get("resources") or []}
    for name, entry in entries.items():
        if (
            "/" in name
            or (plural is not None and name != plural)
            or (kind is not None and entry["kind"] != kind)
        ):
            continue
        return Resource(
            group=group,
            version=version,
            plural=name,
            kind=entry["kind"],
            namespaced=bool(entry.get("namespaced")),
            status_subresource=f"{name}/status" in entries,
        )
    return None
