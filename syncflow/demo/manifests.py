"""The objects the demo creates: a sample ``Database`` CRD, its PublishedResource, and kcp objects."""

from __future__ import annotations

import json
from typing import Any

Obj = dict[str, Any]

GROUP = "demo.syncflow.dev"
VERSION = "v1"
KIND = "Database"
PLURAL = "databases"
EXPORT = "databases"
PUBLISHED_RESOURCE = "publish-databases"


def database_crd() -> Obj:
    """The service cluster's CRD: a namespaced ``Database`` with a status subresource."""
    spec_schema = {
        "type": "object",
        "properties": {
            "engine": {"type": "string", "enum": ["postgres", "mysql"]},
            "version": {"type": "string"},
            "storageGB": {"type": "integer", "minimum": 1},
        },
    }
    status_schema = {
        "type": "object",
        "properties": {"phase": {"type": "string"}, "endpoint": {"type": "string"}},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": KIND.lower(), "kind": KIND, "shortNames": ["db"]},
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Engine", "type": "string", "jsonPath": ".spec.engine"},
                        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
                    ],
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": spec_schema, "status": status_schema},
                        }
                    },
                }
            ],
        },
    }


def published_resource(agent_name: str) -> Obj:
    """Publish ``Database`` as it is, with the default naming rule for local copies."""
    return {
        "apiVersion": "syncagent.kcp.io/v1alpha1",
        "kind": "PublishedResource",
        "metadata": {"name": PUBLISHED_RESOURCE, "labels": {"agent": agent_name}},
        "spec": {
            "resource": {"apiGroup": GROUP, "kind": KIND, "versions": [VERSION]},
            "synchronization": {"enabled": True},
        },
    }


def api_binding(export_path: str, claims: list[Obj]) -> Obj:
    """An APIBinding to the demo's export that accepts every permission claim the export asks for."""
    return {
        "apiVersion": "apis.kcp.io/v1alpha1",
        "kind": "APIBinding",
        "metadata": {"name": EXPORT},
        "spec": {
            "reference": {"export": {"path": export_path, "name": EXPORT}},
            "permissionClaims": [{**claim, "state": "Accepted"} for claim in claims],
        },
    }


def database(name: str, engine: str = "postgres", storage_gb: int = 10) -> Obj:
    """A ``Database`` object as a kcp user creates it."""
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": KIND,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"engine": engine, "version": "16", "storageGB": storage_gb},
    }


def database_json(name: str, engine: str = "postgres", storage_gb: int = 10) -> str:
    """One-line JSON of a ``Database`` (for a copy-and-paste ``kubectl create -f -``)."""
    return json.dumps(database(name, engine, storage_gb), separators=(",", ":"))
