"""The source of a projection: the CRD a PublishedResource names, or a built-in type made into one."""

from __future__ import annotations

from typing import Any

from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.schemas import builtin_spec, find_crd
from syncflow.modes.publish.projection import ProjectionError

Obj = dict[str, Any]


def source_spec(api: JsonApi, group: str, kind: str, crds: list[Obj]) -> tuple[Obj, int]:
    """The CRD spec to project and its generation (0 for a synthesised built-in type)."""
    crd = find_crd(crds, group, kind)
    if crd is not None:
        if crd["metadata"].get("deletionTimestamp"):
            raise ProjectionError(
                "SourceNotFound", f"the CustomResourceDefinition of {kind}.{group} is being deleted"
            )
        return crd["spec"], int(crd["metadata"].get("generation", 0))
    spec = builtin_spec(api, group, kind)
    if spec is None:
        raise ProjectionError(
            "SourceNotFound",
            f"no CustomResourceDefinition or built-in type serves kind {kind} in API group "
            f"{group or 'core'!r}; this PublishedResource is retried when a matching CRD appears",
        )
    return spec, 0
