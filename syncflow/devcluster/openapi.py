"""OpenAPI v3 and v2 documents: every kind's schema, and the PATCH parameters kubectl looks for.

Each kind has a schema tagged with its ``x-kubernetes-group-version-kind``: a custom resource's is
its CRD version's ``openAPIV3Schema`` (``metadata`` as a reference to ``ObjectMeta``), so
``kubectl explain <kind>.spec.field`` works; a built-in kind's is an object with ``apiVersion``,
``kind`` and ``metadata`` that keeps every other field (devcluster holds no field schemas of
built-in kinds). kubectl (``--validate=strict``, the default) asks whether an endpoint supports
the ``fieldValidation`` query parameter; when it does, it leaves validation to the server, so each
group-version document lists, per kind, the object path with a PATCH operation that declares it.
v2 (``/openapi/v2``) is served as JSON or, as client-go asks for it, as protobuf.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable
from typing import Any

import orjson

from syncflow.devcluster.resources import ResourceType, group_versions

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_STRING = {"type": "string"}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_OBJECT_META_SCHEMA: dict[str, Any] = {
    "description": "Standard object metadata.",
    "type": "object",
    "properties": {
        "name": {**_STRING, "description": "Name, unique within a namespace."},
        "generateName": _STRING,
        "namespace": {**_STRING, "description": "Namespace of a namespaced object."},
        "uid": _STRING,
        "resourceVersion": _STRING,
        "generation": {"type": "integer", "format": "int64"},
        "creationTimestamp": {**_STRING, "format": "date-time"},
        "deletionTimestamp": {**_STRING, "format": "date-time"},
        "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
        "labels": {**_STRING_MAP, "description": "Labels: selectable key/value pairs."},
        "annotations": {**_STRING_MAP, "description": "Annotations: non-identifying key/value pairs."},
        "finalizers": {"type": "array", "items": _STRING},
        "ownerReferences": {
            "type": "array",
            "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
        "managedFields": {
            "type": "array",
            "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    },
}
_CUSTOM_ROOT_FIELDS = {
    "apiVersion": {
        **_STRING,
        "description": "APIVersion defines the versioned schema of this representation.",
    },
    "kind": {**_STRING, "description": "Kind is a string value representing the REST resource."},
}


def definition_name(rtype: ResourceType, version: str) -> str:
    """The schema name kube-apiserver uses: ``io.k8s.api.apps.v1.Deployment``, ``com.example.v1.Widget``."""
    group, kind = rtype.group, rtype.kind
    if group == "apiextensions.k8s.io":
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{kind}"
    if group == "apiregistration.k8s.io":
        return f"io.k8s.kube-aggregator.pkg.apis.apiregistration.{version}.{kind}"
    if not rtype.custom and (group.endswith(".k8s.io") or "." not in group):
        return f"io.k8s.api.{group.split('.')[0] or 'core'}.{version}.{kind}"
    return ".".join([*reversed(group.split(".")), version, kind])


def kind_schema(rtype: ResourceType, version: str, ref_prefix: str) -> dict[str, Any]:
    """The schema of one kind at one version, referring to ObjectMeta under ``ref_prefix``."""
    gvk = [{"group": rtype.group, "version": version, "kind": rtype.kind}]
    metadata = {"$ref": ref_prefix + OBJECT_META}
    custom = rtype.schemas.get(version) if rtype.custom else None
    if custom:
        schema = copy.deepcopy(custom)
        schema["properties"] = {
            **_CUSTOM_ROOT_FIELDS,
            **(schema.get("properties") or {}),
            "metadata": metadata,
        }
    else:
        schema = {
            "description": f"{rtype.kind} ({rtype.api_version(version)}).",
            "type": "object",
            "properties": {**_CUSTOM_ROOT_FIELDS, "metadata": metadata},
            "x-kubernetes-preserve-unknown-fields": True,
        }
    schema["x-kubernetes-group-version-kind"] = gvk
    return schema


def _served(types: Iterable[ResourceType], group: str, version: str) -> list[ResourceType]:
    return [t for t in types if t.group == group and version in t.versions]


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _object_path(rtype: ResourceType, version: str) -> str:
    prefix = "/" + _gv_path(rtype.group, version)
    if rtype.namespaced:
        return f"{prefix}/namespaces/{{namespace}}/{rtype.plural}/{{name}}"
    return f"{prefix}/{rtype.plural}/{{name}}"


def group_version_document(types: Iterable[ResourceType], group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group-version, or None if it is not served."""
    types = _served(types, group, version)
    if not types:
        return None
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {OBJECT_META: _OBJECT_META_SCHEMA}
    for rtype in types:
        schemas[definition_name(rtype, version)] = kind_schema(rtype, version, "#/components/schemas/")
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
        "components": {"schemas": schemas},
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


def _v2_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema as v2 publishes it: where unknown fields are kept, no fields are listed (so clients
    that validate against v2, like kubectl for a ``kind: List``, accept any), as kube does for CRDs."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return {
            k: v for k, v in schema.items() if k not in ("properties", "additionalProperties", "required")
        }
    out = dict(schema)
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _v2_schema(v) for k, v in schema["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            out[key] = _v2_schema(schema[key])
    return out


def v2_document(types: Iterable[ResourceType]) -> dict[str, Any]:
    """The /openapi/v2 (Swagger 2.0) document: the definitions of every served kind."""
    definitions: dict[str, Any] = {OBJECT_META: _OBJECT_META_SCHEMA}
    for rtype in types:
        for version in rtype.versions:
            schema = kind_schema(rtype, version, "#/definitions/")
            definitions[definition_name(rtype, version)] = _v2_schema(schema)
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes (devcluster)", "version": "v1.34.0"},
        "paths": {},
        "definitions": definitions,
    }


def accepts_json(accept: str) -> bool:
    """Whether an Accept header allows JSON (none, ``*/*`` or ``application/json``)."""
    kinds = {part.split(";")[0].strip() for part in accept.split(",") if part.strip()}
    return not kinds or bool(kinds & {"*/*", "application/*", "application/json"})
