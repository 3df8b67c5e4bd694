"""A minimal OpenAPI v3 surface: enough for kubectl to find every kind and its PATCH parameters.

kubectl (``--validate=strict``, the default) asks the server whether an endpoint supports the
``fieldValidation`` query parameter; when it does, kubectl leaves validation to the server instead
of downloading full schemas. Each group-version document therefore lists, per kind, the object
path with a PATCH operation that declares ``fieldValidation``, tagged with the kind's
``x-kubernetes-group-version-kind``. Full schemas are not published (``kubectl explain`` does not
work; see docs/devcluster.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import orjson

from syncflow.devcluster.resources import ResourceType, group_versions


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _object_path(rtype: ResourceType, version: str) -> str:
    prefix = "/" + _gv_path(rtype.group, version)
    if rtype.namespaced:
        return f"{prefix}/namespaces/{{namespace}}/{rtype.plural}/{{name}}"
    return f"{prefix}/{rtype.plural}/{{name}}"


def group_version_document(types: Iterable[ResourceType], group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group-version, or None if it is not served."""
    types = [t for t in types if t.group == group and version in t.versions]
    if not types:
        return None
    paths: dict[str, Any] = {}
    for rtype in types:
        gvk = {"group": group, "version": version, "kind": rtype.kind}
        paths[_object_path(rtype, version)] = {
            "patch": {
                "operationId": f"patch{rtype.kind}",
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": gvk,
                "parameters": [
                    {
                        "name": "fieldValidation",
                        "in": "query",
                        "schema": {"type": "string", "uniqueItems": True},
                    },
                    {
                        "name": "fieldManager",
                        "in": "query",
                        "schema": {"type": "string", "uniqueItems": True},
                    },
                ],
                "responses": {"200": {"description": "OK"}},
            }
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (devcluster)", "version": "v1.34.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }


def root_document(types: Iterable[ResourceType], url_prefix: str = "") -> dict[str, Any]:
    """The /openapi/v3 index: one entry per served group-version, with a content hash."""
    types = list(types)
    paths: dict[str, Any] = {}
    for group, versions in group_versions(types).items():
        for version in versions:
            doc = group_version_document(types, group, version)
            digest = hashlib.sha512(orjson.dumps(doc)).hexdigest()[:32].upper()
            gv = _gv_path(group, version)
            paths[gv] = {"serverRelativeURL": f"{url_prefix}/openapi/v3/{gv}?hash={digest}"}
    return {"paths": paths}
