"""Merging ready schemas and permission claims into the managed APIExport."""

from __future__ import annotations

from syncflow.modes.publish.apiexport import export_patch, merge_claims, merge_schemas, wanted_claims


def test_ready_schema_replaces_its_group_resource_and_keeps_the_rest() -> None:
    current = ["vold0001.certificates.certs.example.com", "vforeign1.things.other.io"]
    merged = merge_schemas(
        current, ["vnew00002.certificates.certs.example.com", "vfresh003.issuers.certs.example.com"]
    )
    assert merged == [
        "vnew00002.certificates.certs.example.com",
        "vfresh003.issuers.certs.example.com",
        "vforeign1.things.other.io",
    ]


def test_schemas_are_never_removed() -> None:
    assert merge_schemas(["va.x.g.io", "vb.y.g.io"], []) == ["va.x.g.io", "vb.y.g.io"]


def test_claims_only_grow_and_are_sorted() -> None:
    existing = [{"group": "zeta.io", "resource": "things", "all": True}]
    merged = merge_claims(
        existing, [{"group": "", "resource": "events"}, {"group": "zeta.io", "resource": "things"}]
    )
    assert merged == [
        {"group": "", "resource": "events", "all": True},
        {"group": "zeta.io", "resource": "things", "all": True},
    ]


def test_wanted_claims() -> None:
    specs = [
        {"resource": {"apiGroup": "a.io", "kind": "A"}},
        {
            "resource": {"apiGroup": "b.io", "kind": "B"},
            "enableWorkspacePaths": True,
            "related": [
                {
                    "identifier": "secret",
                    "origin": "service",
                    "group": "",
                    "version": "v1",
                    "resource": "secrets",
                },
                {"identifier": "mine", "origin": "kcp", "group": "b.io", "version": "v1", "resource": "bs"},
                {
                    "identifier": "foreign",
                    "origin": "kcp",
                    "group": "f.io",
                    "version": "v1",
                    "resource": "fs",
                    "identityHash": "abc",
                },
            ],
        },
    ]
    claims = wanted_claims(specs, exported={("b.io", "bs")})
    assert claims == [
        {"group": "", "resource": "events"},
        {"group": "", "resource": "namespaces"},
        {"group": "core.kcp.io", "resource": "logicalclusters"},
        {"group": "", "resource": "secrets"},
        {"group": "f.io", "resource": "fs", "identityHash": "abc"},
    ]
    assert wanted_claims([{"resource": {}}], set()) == [{"group": "", "resource": "events"}]


def test_export_patch_is_none_when_up_to_date() -> None:
    export = {
        "metadata": {"resourceVersion": "5", "annotations": {"syncagent.kcp.io/agent-name": "agent"}},
        "spec": {
            "latestResourceSchemas": ["va.x.g.io"],
            "permissionClaims": [{"group": "", "resource": "events", "all": True}],
        },
    }
    assert export_patch(export, ["va.x.g.io"], [{"group": "", "resource": "events"}], "agent") is None
    patch = export_patch(export, ["vb.x.g.io"], [], "other")
    assert patch == {
        "spec": {"latestResourceSchemas": ["vb.x.g.io"]},
        "metadata": {"annotations": {"syncagent.kcp.io/agent-name": "other"}, "resourceVersion": "5"},
    }
