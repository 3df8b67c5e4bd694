"""A served type as a CRD spec: its CRD's own, or one made for a built-in type.

For a CRD, its spec is used as is. A built-in type (``ConfigMap``, ``Deployment``, …) has no CRD, so
one is synthesised from discovery (names, scope, versions, subresources) and, where the server
publishes it, the type's OpenAPI v3 schema; without one the schema keeps every field
(``x-kubernetes-preserve-unknown-fields``). Publish mode projects these specs; clusters mode pulls
them into kcp.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi

Obj = dict[str, Any]

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
_FREE_FORM: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
_MAX_SCHEMA_DEPTH = 12


def find_crd(crds: list[Obj], group: str, kind: str) -> Obj | None:
    """The CRD serving ``kind`` in ``group``, if any."""
    for crd in crds:
        spec = crd.get("spec") or {}
        if spec.get("group") == group and (spec.get("names") or {}).get("kind") == kind:
            return crd
    return None


def _group_versions(api: JsonApi, group: str) -> tuple[list[str], str]:
    if not group:
        return ["v1"], "v1"
    try:
        doc = api.get(f"/apis/{group}")
    except ApiException as exc:
        if exc.status == 404:
            return [], ""
        raise
    return [v["version"] for v in doc.get("versions") or []], (doc.get("preferredVersion") or {}).get(
        "version", ""
    )


def builtin_spec(api: JsonApi, group: str, kind: str) -> Obj | None:
    """A CRD spec synthesised from discovery for a built-in type; None if ``api`` serves no such kind."""
    versions, preferred = _group_versions(api, group)
    found: list[Obj] = []
    resource: Obj = {}
    for version in versions:
        listing = api.get(f"/apis/{group}/{version}" if group else f"/api/{version}")
        names = {r["name"] for r in listing.get("resources") or []}
        for entry in listing.get("resources") or []:
            if entry.get("kind") == kind and "/" not in entry["name"]:
                resource = entry
                subresources: Obj = {}
                if f"{entry['name']}/status" in names:
                    subresources["status"] = {}
                if f"{entry['name']}/scale" in names:
                    subresources["scale"] = {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                    }
                version_spec: Obj = {
                    "name": version,
                    "served": True,
                    "storage": version == preferred,
                    "schema": {"openAPIV3Schema": openapi_schema(api, group, version, kind)},
                }
                if subresources:
                    version_spec["subresources"] = subresources
                found.append(version_spec)
    if not found:
        return None
    return {
        "group": group,
        "scope": "Namespaced" if resource.get("namespaced") else "Cluster",
        "names": {
            "kind": kind,
            "listKind": f"{kind}List",
            "plural": resource["name"],
            "singular": resource.get("singularName") or kind.lower(),
            **({"shortNames": resource["shortNames"]} if resource.get("shortNames") else {}),
            **({"categories": resource["categories"]} if resource.get("categories") else {}),
        },
        "versions": found,
    }


def openapi_schema(api: JsonApi, group: str, version: str, kind: str) -> Obj:
    """The type's schema from ``/openapi/v3``, with references inlined; free-form if unpublished."""
    gv_path = f"apis/{group}/{version}" if group else f"api/{version}"
    try:
        document = api.get(f"/openapi/v3/{gv_path}")
    except ApiException:
        return dict(_FREE_FORM)
    schemas: dict[str, Obj] = (document.get("components") or {}).get("schemas") or {}
    for schema in schemas.values():
        gvks = schema.get("x-kubernetes-group-version-kind") or []
        if {"group": group, "version": version, "kind": kind} in gvks:
            inlined: Obj = _inline(schema, schemas, 0)
            return inlined
    return dict(_FREE_FORM)


def _inline(schema: Any, schemas: dict[str, Obj], depth: int) -> Any:
    """Resolve ``$ref``/single ``allOf`` references (deep recursion becomes free-form)."""
    if isinstance(schema, list):
        return [_inline(item, schemas, depth) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if depth > _MAX_SCHEMA_DEPTH:
        return dict(_FREE_FORM)
    if "$ref" in schema:
        target = schemas.get(schema["$ref"].rsplit("/", 1)[-1], _FREE_FORM)
        return _inline({**target, **{k: v for k, v in schema.items() if k != "$ref"}}, schemas, depth + 1)
    if len(schema.get("allOf") or []) == 1:
        merged = {**schema["allOf"][0], **{k: v for k, v in schema.items() if k != "allOf"}}
        return _inline(merged, schemas, depth)
    return {
        k: _inline(v, schemas, depth + 1)
        for k, v in schema.items()
        if k
        not in (
            "x-kubernetes-group-version-kind",
            "x-kubernetes-list-map-keys",
            "x-kubernetes-patch-merge-key",
            "x-kubernetes-patch-strategy",
            "x-kubernetes-unions",
        )
    }
