"""Projection of CRDs into APIResourceSchemas (api-syncagent's rules)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from syncflow.modes.publish.crdjson import crd_spec_json
from syncflow.modes.publish.projection import (
    ProjectionError,
    api_resource_schema,
    project,
    schema_name,
)
from syncflow.modes.publish.versions import sort_versions


def _crd(*versions: tuple[str, bool, bool]) -> dict[str, Any]:
    return {
        "group": "cert-manager.io",
        "scope": "Namespaced",
        "names": {
            "kind": "Certificate",
            "listKind": "CertificateList",
            "plural": "certificates",
            "singular": "certificate",
            "shortNames": ["cert", "certs"],
            "categories": ["cert-manager"],
        },
        "versions": [
            {
                "name": name,
                "served": served,
                "storage": storage,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-version": name}},
            }
            for name, served, storage in versions
        ],
    }


RESOURCE = {"apiGroup": "cert-manager.io", "kind": "Certificate"}


def test_without_projection_keeps_everything() -> None:
    projected = project(_crd(("v1", True, True)), RESOURCE, None)
    assert projected["group"] == "cert-manager.io" and projected["scope"] == "Namespaced"
    assert projected["names"]["plural"] == "certificates" and projected["names"]["shortNames"] == [
        "cert",
        "certs",
    ]
    assert [v["name"] for v in projected["versions"]] == ["v1"]


def test_full_projection() -> None:
    projection = {
        "group": "certs.example.com",
        "kind": "Sertifikat",
        "plural": "sertifikater",
        "shortNames": ["serts"],
        "versions": {"v1": "v1beta1"},
        "scope": "Cluster",
        "categories": [],
    }
    projected = project(_crd(("v1", True, True)), {**RESOURCE, "versions": ["v1"]}, projection)
    assert projected["group"] == "certs.example.com" and projected["scope"] == "Cluster"
    assert projected["names"] == {
        "kind": "Sertifikat",
        "listKind": "SertifikatList",
        "singular": "sertifikat",
        "plural": "sertifikater",
        "shortNames": ["serts"],
    }
    assert [v["name"] for v in projected["versions"]] == ["v1beta1"]


def test_kind_projection_derives_names() -> None:
    names = project(_crd(("v1", True, True)), RESOURCE, {"kind": "Cert"})["names"]
    assert (names["kind"], names["listKind"], names["singular"], names["plural"]) == (
        "Cert",
        "CertList",
        "cert",
        "certs",
    )
    assert names["shortNames"] == ["cert", "certs"]


def test_selected_versions_and_storage_fallback() -> None:
    crd = _crd(("v1alpha1", True, False), ("v1beta1", True, False), ("v1", True, True))
    projected = project(crd, {**RESOURCE, "versions": ["v1alpha1", "v1beta1"]}, None)
    assert [(v["name"], bool(v.get("storage"))) for v in projected["versions"]] == [
        ("v1beta1", True),
        ("v1alpha1", False),
    ]
    assert [v["name"] for v in project(crd, RESOURCE, None)["versions"]] == ["v1", "v1beta1", "v1alpha1"]


def test_unserved_version_is_an_error() -> None:
    crd = _crd(("v1", True, True), ("v2", False, False))
    with pytest.raises(ProjectionError) as error:
        project(crd, {**RESOURCE, "versions": ["v2"]}, None)
    assert (
        error.value.reason == "VersionNotServed"
        and "v2" in error.value.message
        and "served: v1" in str(error.value)
    )


def test_deprecated_single_version_fields() -> None:
    projected = project(_crd(("v1", True, True)), {**RESOURCE, "version": "v1"}, {"version": "v2"})
    assert [v["name"] for v in projected["versions"]] == ["v2"]
    with pytest.raises(ProjectionError):
        project(_crd(("v1", True, True), ("v2", True, False)), RESOURCE, {"version": "v3"})


def test_colliding_version_mapping_is_an_error() -> None:
    with pytest.raises(ProjectionError):
        project(_crd(("v1", True, True), ("v2", True, False)), RESOURCE, {"versions": {"v1": "v2"}})


def test_schema_name_and_object() -> None:
    projected = project(
        _crd(("v1", True, True), ("v1beta1", True, False)), RESOURCE, {"group": "certs.example.com"}
    )
    name = schema_name(projected)
    prefix, rest = name.split(".", 1)
    assert rest == "certificates.certs.example.com" and len(prefix) == 9 and prefix.startswith("v")
    assert schema_name(projected) == name
    changed = project(_crd(("v1", True, True)), RESOURCE, {"group": "certs.example.com"})
    assert schema_name(changed) != name
    ars = api_resource_schema(projected, "agent-1", 7)
    assert ars["metadata"]["name"] == name and ars["metadata"]["labels"] == {
        "syncagent.kcp.io/agent-name": "agent-1"
    }
    assert ars["metadata"]["annotations"]["syncagent.kcp.io/source-generation"] == "7"
    assert ars["spec"]["versions"][0]["schema"] == {"type": "object", "x-version": "v1"}
    assert ars["spec"]["conversion"] == {"strategy": "None"}


def test_core_group_schema_name_uses_core() -> None:
    crd = {
        "group": "",
        "scope": "Namespaced",
        "names": {"kind": "ConfigMap", "plural": "configmaps"},
        "versions": [{"name": "v1", "served": True, "storage": True}],
    }
    assert schema_name(project(crd, {"apiGroup": "", "kind": "ConfigMap"}, None)).endswith(".configmaps.core")


def test_kube_version_order() -> None:
    assert sort_versions(["v1alpha1", "foo", "v2", "v1beta2", "v1", "v1beta1", "v10"]) == [
        "v10",
        "v2",
        "v1",
        "v1beta2",
        "v1beta1",
        "v1alpha1",
        "foo",
    ]


_SCHEMAS = Path(__file__).parent.parent / "vectors" / "schemas"
_SCHEMA_VECTORS = json.loads((_SCHEMAS / "vectors.json").read_text())


@pytest.mark.parametrize("vector", _SCHEMA_VECTORS, ids=[v["name"] for v in _SCHEMA_VECTORS])
def test_schema_names_match_api_syncagents(vector: dict[str, Any]) -> None:
    """Go (the real apiextensions/v1 types, json.Encoder) computed these; see tests/vectors/schemas."""
    assert crd_spec_json(vector["spec"]) == vector["json"]
    assert schema_name(vector["spec"]) == vector["schemaName"]
