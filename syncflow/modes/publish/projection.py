"""Projection of a CRD into an APIResourceSchema, as a PublishedResource asks for it (pure functions).

The selected versions are kept, then ``spec.projection`` renames group, versions and kind (with
derived singular, plural and listKind), overrides plural, scope, shortNames and categories. The
schema is named ``v<first 8 hex of SHA-1 of the projected spec>.<plural>.<group>``, so any change
of CRD or projection gives a new, immutable schema.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from syncflow.modes.publish import crdjson
from syncflow.modes.publish.versions import sort_versions
from syncflow.sync.metadata import AGENT_LABEL

Obj = dict[str, Any]

SOURCE_GENERATION_ANNOTATION = "syncagent.kcp.io/source-generation"

# Fields of a CRD version that an APIResourceSchema version carries over.
_VERSION_FIELDS = (
    "name",
    "served",
    "storage",
    "deprecated",
    "deprecationWarning",
    "subresources",
    "additionalPrinterColumns",
)


@dataclass(frozen=True)
class ProjectionError(Exception):
    """Why a PublishedResource cannot be projected: becomes its ``Ready=False`` condition."""

    reason: str
    message: str

    def __str__(self) -> str:
        return self.message


def wanted_versions(resource: Obj) -> list[str]:
    """The versions ``spec.resource`` selects (empty: every served version)."""
    if resource.get("versions"):
        return list(resource["versions"])
    return [resource["version"]] if resource.get("version") else []


def select_versions(crd_spec: Obj, wanted: list[str]) -> list[Obj]:
    """The CRD's versions that are selected; the storage flag moves to the last one if it was dropped."""
    served = [v for v in crd_spec.get("versions") or [] if v.get("served", True)]
    by_name = {v["name"]: v for v in served}
    missing = [name for name in wanted if name not in by_name]
    if missing:
        available = ", ".join(by_name) or "none"
        raise ProjectionError(
            "VersionNotServed",
            f"version {', '.join(missing)} of {crd_spec['names']['kind']}.{crd_spec['group']} is not served "
            f"(served: {available})",
        )
    selected = [dict(by_name[name]) for name in wanted] if wanted else [dict(v) for v in served]
    if not selected:
        raise ProjectionError(
            "VersionNotServed", f"{crd_spec['names']['kind']}.{crd_spec['group']} serves no version"
        )
    if not any(v.get("storage") for v in selected):
        selected[-1]["storage"] = True
    return selected


def _rename_versions(versions: list[Obj], projection: Obj) -> list[Obj]:
    mapping: dict[str, str] = dict(projection.get("versions") or {})
    if projection.get("version"):
        if len(versions) != 1:
            raise ProjectionError(
                "InvalidProjection",
                "spec.projection.version needs exactly one selected version; use versions",
            )
        mapping = {versions[0]["name"]: projection["version"]}
    renamed = [{**v, "name": mapping.get(v["name"], v["name"])} for v in versions]
    names = [v["name"] for v in renamed]
    if len(set(names)) != len(names):
        raise ProjectionError(
            "InvalidProjection", f"spec.projection.versions maps two versions to one: {names}"
        )
    order = sort_versions(names)
    return sorted(renamed, key=lambda v: order.index(v["name"]))


def _names(source: Obj, projection: Obj) -> Obj:
    names = {
        k: v
        for k, v in source.items()
        if k in ("kind", "listKind", "plural", "singular", "shortNames", "categories")
    }
    if projection.get("kind"):
        kind = projection["kind"]
        singular = kind.lower()
        names.update(kind=kind, listKind=f"{kind}List", singular=singular, plural=f"{singular}s")
    if projection.get("plural"):
        names["plural"] = projection["plural"]
    for field in ("shortNames", "categories"):
        if projection.get(field) is not None:
            names[field] = list(projection[field])
    names.setdefault("singular", names["kind"].lower())
    names.setdefault("listKind", names["kind"] + "List")
    return {k: v for k, v in names.items() if v not in (None, [])}


def project(crd_spec: Obj, resource: Obj, projection: Obj | None) -> Obj:
    """The projected CRD spec (group, names, scope, versions) of ``crd_spec``."""
    projection = projection or {}
    versions = _rename_versions(select_versions(crd_spec, wanted_versions(resource)), projection)
    return {
        "group": projection.get("group") or crd_spec["group"],
        "names": _names(crd_spec["names"], projection),
        "scope": projection.get("scope") or crd_spec.get("scope", "Namespaced"),
        "versions": [{k: v[k] for k in (*_VERSION_FIELDS, "schema") if k in v} for v in versions],
    }


def schema_name(projected: Obj) -> str:
    """``v<first 8 hex of SHA-1 of the projected spec>.<plural>.<group>`` (``core`` for the core group).

    The spec is hashed as api-syncagent hashes it (Go's JSON of the CRD spec struct, see
    :mod:`~syncflow.modes.publish.crdjson`), so both agents give a CRD and projection the same name.
    """
    digest = hashlib.sha1(crdjson.crd_spec_json(projected).encode(), usedforsecurity=False).hexdigest()
    return f"v{digest[:8]}.{projected['names']['plural']}.{projected['group'] or 'core'}"


def api_resource_schema(projected: Obj, agent_name: str, source_generation: int) -> Obj:
    """The APIResourceSchema object for a projected spec."""
    versions = []
    for version in projected["versions"]:
        converted = {k: version[k] for k in _VERSION_FIELDS if k in version}
        converted["schema"] = (version.get("schema") or {}).get("openAPIV3Schema") or {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
        }
        versions.append(converted)
    spec: Obj = {
        "group": projected["group"],
        "names": projected["names"],
        "scope": projected["scope"],
        "versions": versions,
    }
    if len(versions) > 1:
        spec["conversion"] = {"strategy": "None"}
    return {
        "apiVersion": "apis.kcp.io/v1alpha1",
        "kind": "APIResourceSchema",
        "metadata": {
            "name": schema_name(projected),
            "labels": {AGENT_LABEL: agent_name},
            "annotations": {AGENT_LABEL: agent_name, SOURCE_GENERATION_ANNOTATION: str(source_generation)},
        },
        "spec": spec,
    }


def projected_group_resource(projected: Obj) -> tuple[str, str]:
    """(group, plural) the projection serves in kcp."""
    return projected["group"], projected["names"]["plural"]
