"""CustomResourceDefinitions (apiextensions.k8s.io/v1) generated from the API models.

``model_json_schema()`` becomes a structural OpenAPI v3 schema: every ``$ref`` inlined, ``title``
and ``default: null`` dropped, ``anyOf [X, null]`` turned into ``X`` (``nullable: true`` only for
required fields that accept null; an optional field's null means absent, as in Go's omitempty),
``additionalProperties: false`` dropped (the server prunes unknown fields), free-form values
marked ``x-kubernetes-preserve-unknown-fields``, and the root's apiVersion/kind/metadata given
the shape apiextensions requires. A new API type lists its :class:`APIType` in ``API_TYPES``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from syncflow.api import cluster, edgesyncconfig, publishedresource, synctarget
from syncflow.api.apitype import APIType

API_TYPES: tuple[APIType, ...] = (
    publishedresource.API_TYPE,
    synctarget.API_TYPE,
    edgesyncconfig.API_TYPE,
    cluster.API_TYPE,
)
"""Every API type syncflow serves, in install order."""

_DROPPED = frozenset({"title", "$defs"})
_ROOT_FIELDS = {
    "apiVersion": {"type": "string", "description": "The versioned schema of this object."},
    "kind": {"type": "string", "description": "The REST resource this object represents."},
    "metadata": {"type": "object"},
}


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$ref`` (if any) merged in; the referencing schema's keys win."""
    out = dict(schema)
    ref = out.pop("$ref", None)
    if ref is None:
        return out
    target = _resolve(defs[ref.rsplit("/", 1)[-1]], defs)
    return {**target, **out}


def _without_null(schema: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """Split ``anyOf [X, null]`` into ``X`` (keeping sibling keys) and whether null was allowed."""
    options = schema.get("anyOf")
    if not isinstance(options, list):
        return dict(schema), False
    rest = [o for o in options if o != {"type": "null"}]
    if len(rest) != 1 or len(rest) == len(options):
        return dict(schema), False
    siblings = {k: v for k, v in schema.items() if k != "anyOf"}
    return {**rest[0], **siblings}, True


def structural(
    schema: Mapping[str, Any], defs: Mapping[str, Any], *, nullable: bool = False
) -> dict[str, Any]:
    """Convert one pydantic JSON schema node (and its children) to a structural OpenAPI v3 schema."""
    node, allows_null = _without_null(_resolve(schema, defs))
    node = _resolve(node, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or (key == "default" and value is None):
            continue
        if key == "description":
            out[key] = str(value).replace("``", "")
        elif key == "properties":
            required = set(node.get("required", ()))
            out[key] = {name: structural(sub, defs, nullable=name in required) for name, sub in value.items()}
        elif key == "items":
            out[key] = structural(value, defs)
        elif key == "additionalProperties":
            if isinstance(value, Mapping):
                out[key] = structural(value, defs)
            elif value is True:
                out["x-kubernetes-preserve-unknown-fields"] = True
        elif key == "const":
            out["enum"] = [value]
        else:
            out[key] = value
    if "type" not in out and "anyOf" not in out:
        out["x-kubernetes-preserve-unknown-fields"] = True
    if allows_null and nullable:
        out["nullable"] = True
    return out


def openapi_schema(api: APIType) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of ``api``'s root model."""
    raw = api.model.model_json_schema(by_alias=True)
    schema = structural(raw, raw.get("$defs", {}))
    schema["properties"] = {**schema.get("properties", {}), **_ROOT_FIELDS}
    schema["required"] = [r for r in schema.get("required", []) if r not in _ROOT_FIELDS]
    if not schema["required"]:
        del schema["required"]
    return schema


def crd(api: APIType) -> dict[str, Any]:
    """The CustomResourceDefinition of ``api``."""
    version: dict[str, Any] = {
        "name": api.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": openapi_schema(api)},
    }
    if api.status_subresource:
        version["subresources"] = {"status": {}}
    if api.printer_columns:
        version["additionalPrinterColumns"] = [dict(c) for c in api.printer_columns]
    names: dict[str, Any] = {
        "kind": api.kind,
        "listKind": f"{api.kind}List",
        "plural": api.plural,
        "singular": api.kind.lower(),
    }
    if api.short_names:
        names["shortNames"] = list(api.short_names)
    if api.categories:
        names["categories"] = list(api.categories)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": api.crd_name},
        "spec": {"group": api.group, "names": names, "scope": api.scope, "versions": [version]},
    }


MODE_TYPES: dict[str, tuple[APIType, ...]] = {
    "publish": (publishedresource.API_TYPE,),
    "workload": (synctarget.API_TYPE,),
    "edge": (edgesyncconfig.API_TYPE,),
    "clusters": (cluster.API_TYPE,),
}
"""The API types each mode's configuration lives in, installed where that mode is configured: the
service cluster (publish), a workspace without kcp's TMC APIs (workload), the mailbox workspace
(edge), the Clusters' workspace (clusters)."""


def all_crds() -> list[dict[str, Any]]:
    """The CRD of every API type in ``API_TYPES``."""
    return [crd(api) for api in API_TYPES]


def crds_for(mode: str) -> list[dict[str, Any]]:
    """The CRDs ``mode`` is configured with (``all``: every one)."""
    return all_crds() if mode == "all" else [crd(api) for api in MODE_TYPES[mode]]


def to_yaml(documents: Iterable[Mapping[str, Any]]) -> str:
    """A multi-document YAML stream (``---`` between documents), keys in generated order."""
    return "".join(
        "---\n" + yaml.safe_dump(dict(doc), sort_keys=False, default_flow_style=False) for doc in documents
    )
