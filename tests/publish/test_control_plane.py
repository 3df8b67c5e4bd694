"""Publish mode, control plane (issue 5): PublishedResource → APIResourceSchema → APIExport, and the
leader-elected watcher — against two devclusters, real Redis and real worker processes."""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from tests.support.publish_env import (
    APIS,
    CLEANUP,
    CRDS,
    EXPORT,
    PUBLISHED,
    PublishEnv,
    crd,
    published,
    readyz,
)
from tests.support.queues import holds
from tests.support.waiting import wait_for


def test_schema_is_created_with_the_projected_fields(publish_env: PublishEnv) -> None:
    env = publish_env
    env.apply(env.service, CRDS, crd("widgets.example.com", "Widget", "widgets", versions=("v1", "v1alpha1")))
    env.apply(
        env.service,
        PUBLISHED,
        published(
            "widgets",
            "widgets.example.com",
            "Widget",
            projection={
                "group": "gadgets.example.io",
                "kind": "Gadget",
                "plural": "gadgetz",
                "shortNames": ["gz"],
                "categories": [],
                "versions": {"v1": "v1beta1"},
                "scope": "Namespaced",
            },
        ),
    )
    name = env.ready_schema("widgets")
    prefix, rest = name.split(".", 1)
    assert rest == "gadgetz.gadgets.example.io" and prefix.startswith("v") and len(prefix) == 9
    schema = env.schema(name)["spec"]
    assert schema["group"] == "gadgets.example.io" and schema["scope"] == "Namespaced"
    assert schema["names"] == {
        "kind": "Gadget",
        "listKind": "GadgetList",
        "singular": "gadget",
        "plural": "gadgetz",
        "shortNames": ["gz"],
    }
    assert [v["name"] for v in schema["versions"]] == ["v1beta1", "v1alpha1"]
    assert [v.get("storage", False) for v in schema["versions"]] == [True, False]
    labels = env.schema(name)["metadata"]["labels"]
    assert labels["syncagent.kcp.io/agent-name"] == env.agent_name
    wait_for(
        lambda: name in (env.export()["spec"].get("latestResourceSchemas") or []),
        timeout=30,
        what=f"the APIExport to list {name}",
    )
    export = env.export()
    assert export["metadata"]["annotations"]["syncagent.kcp.io/agent-name"] == env.agent_name
    claims = {(c.get("group", ""), c["resource"]) for c in export["spec"]["permissionClaims"]}
    assert ("", "events") in claims


def test_builtin_type_is_published(publish_env: PublishEnv) -> None:
    env = publish_env
    env.apply(
        env.service,
        PUBLISHED,
        published("configs", "", "ConfigMap", projection={"group": "configs.example.io"}),
    )
    name = env.ready_schema("configs")
    assert name.endswith(".configmaps.configs.example.io")
    schema = env.schema(name)["spec"]
    assert schema["names"]["kind"] == "ConfigMap" and [v["name"] for v in schema["versions"]] == ["v1"]


def test_crd_change_gives_a_new_schema_and_replaces_the_export_entry(publish_env: PublishEnv) -> None:
    env = publish_env
    env.apply(env.service, CRDS, crd("tools.example.com", "Tool", "tools"))
    env.apply(env.service, PUBLISHED, published("tools", "tools.example.com", "Tool"))
    first = env.ready_schema("tools")
    wait_for(
        lambda: first in env.export()["spec"].get("latestResourceSchemas", []),
        timeout=30,
        what="the first schema in the export",
    )
    env.apply(
        env.service,
        CRDS,
        crd("tools.example.com", "Tool", "tools", extra={"properties": {"size": {"type": "integer"}}}),
    )
    second = wait_for(
        lambda: (name := env.ready_schema("tools")) != first and name,
        timeout=30,
        what="a new schema after the CRD changed",
    )
    wait_for(
        lambda: second in env.export()["spec"].get("latestResourceSchemas", []),
        timeout=30,
        what="the export to list the new schema",
    )
    schemas = env.export()["spec"]["latestResourceSchemas"]
    assert first not in schemas and sum(s.endswith(".tools.tools.example.com") for s in schemas) == 1
    assert env.schema(first)["metadata"]["name"] == first  # the old schema still exists


def test_deleted_publishedresource_keeps_its_schema_in_the_export(publish_env: PublishEnv) -> None:
    env = publish_env
    env.apply(env.service, CRDS, crd("gone.example.com", "Gone", "gones"))
    env.apply(env.service, PUBLISHED, published("gone", "gone.example.com", "Gone"))
    name = env.ready_schema("gone")
    wait_for(
        lambda: name in env.export()["spec"].get("latestResourceSchemas", []),
        timeout=30,
        what="the schema in the export",
    )
    env.service.delete(f"{PUBLISHED}/gone")
    env.apply(
        env.service,
        PUBLISHED,
        published("trigger", "gone.example.com", "Gone", projection={"group": "trigger.example.io"}),
    )
    trigger = env.ready_schema("trigger")
    wait_for(
        lambda: trigger in env.export()["spec"].get("latestResourceSchemas", []),
        timeout=30,
        what="a later export reconcile",
    )
    assert name in env.export()["spec"]["latestResourceSchemas"]


def test_foreign_entries_and_existing_claims_are_kept(publish_env: PublishEnv) -> None:
    env = publish_env
    current = env.export()
    foreign_schema = "vforeign1.things.foreign.io"
    foreign_claim = {"group": "foreign.io", "resource": "things", "all": True, "identityHash": "abc123"}
    spec = {
        **current["spec"],
        "latestResourceSchemas": [*current["spec"].get("latestResourceSchemas", []), foreign_schema],
        "permissionClaims": [*current["spec"].get("permissionClaims", []), foreign_claim],
    }
    env.kcp_org.replace(f"{APIS}/apiexports/{EXPORT}", {**current, "spec": spec})
    env.apply(env.service, CRDS, crd("later.example.com", "Later", "laters"))
    env.apply(env.service, PUBLISHED, published("later", "later.example.com", "Later"))
    name = env.ready_schema("later")
    wait_for(
        lambda: name in env.export()["spec"].get("latestResourceSchemas", []),
        timeout=30,
        what="the export to list the new schema",
    )
    export = env.export()["spec"]
    assert foreign_schema in export["latestResourceSchemas"]
    assert foreign_claim in export["permissionClaims"]
    assert export["latestResourceSchemas"] == sorted(
        export["latestResourceSchemas"], key=lambda s: s.split(".", 1)[1]
    )


def test_invalid_publishedresource_reports_and_recovers(publish_env: PublishEnv) -> None:
    env = publish_env
    env.apply(env.service, PUBLISHED, published("pending", "pending.example.com", "Pending"))
    condition = wait_for(lambda: env.condition("pending"), timeout=30, what="a Ready condition")
    assert condition["status"] == "False" and condition["reason"] == "SourceNotFound"
    assert "Pending" in condition["message"] and "pending.example.com" in condition["message"]
    env.apply(
        env.service,
        PUBLISHED,
        published(
            "badname",
            "pending.example.com",
            "Pending",
            naming={"name": "{{ .Object.metadata.name | nosuchfunc }}"},
        ),
    )
    bad = wait_for(lambda: env.condition("badname"), timeout=30, what="a Ready condition on badname")
    assert bad["reason"] == "InvalidNamingTemplate" and "nosuchfunc" in bad["message"]
    env.apply(env.service, CRDS, crd("pending.example.com", "Pending", "pendings"))
    assert env.ready_schema("pending").endswith(".pendings.pending.example.com")


def test_projection_conflict_is_reported(publish_env: PublishEnv) -> None:
    env = publish_env
    env.apply(env.service, CRDS, crd("dup.example.com", "Dup", "dups"))
    env.apply(
        env.service, PUBLISHED, published("dup-a", "dup.example.com", "Dup", projection={"group": "same.io"})
    )
    env.ready_schema("dup-a")
    env.apply(
        env.service, PUBLISHED, published("dup-b", "dup.example.com", "Dup", projection={"group": "same.io"})
    )
    condition = wait_for(lambda: env.condition("dup-b"), timeout=30, what="a condition on dup-b")
    assert condition["status"] == "False" and condition["reason"] == "ProjectionConflict"
    assert "dup-a" in condition["message"]


def test_sync_keys_are_enqueued_for_kcp_objects(publish_env: PublishEnv) -> None:
    env = publish_env
    schema = env.ready_schema("widgets")
    wait_for(
        lambda: schema in env.export()["spec"].get("latestResourceSchemas", []),
        timeout=30,
        what="the widgets schema in the export",
    )
    team = env.workspace("root:org:team-1")
    path = "/apis/gadgets.example.io/v1beta1/namespaces/default/gadgetz"
    wait_for(lambda: _served(team, path), timeout=30, what="gadgetz to be served in team-1")
    team.create(
        path,
        {
            "apiVersion": "gadgets.example.io/v1beta1",
            "kind": "Gadget",
            "metadata": {"name": "g1"},
            "spec": {"size": 1},
        },
    )
    cluster = team.get("/apis/core.kcp.io/v1alpha1/logicalclusters/cluster")["metadata"]["annotations"][
        "kcp.io/cluster"
    ]
    key = f"sync/widgets/{cluster}/default/g1"

    def enqueued() -> bool:  # queued (or failing) now, or run already: a first sync holds the finalizer
        if holds(env.redis, env.agent_name, key):
            return True
        return CLEANUP in (team.get(f"{path}/g1")["metadata"].get("finalizers") or [])

    wait_for(enqueued, timeout=30, what=lambda: f"{key} to be enqueued\n{env.agent.logs()}")


def _served(api: object, path: str) -> bool:
    try:
        api.get(path)  # type: ignore[attr-defined]
    except ApiException:
        return False
    return True


def test_standby_takes_over_when_the_leader_dies(publish_env: PublishEnv) -> None:
    env = publish_env
    port_b = env.agent.watcher("watch-b")
    lease_path = f"/apis/coordination.k8s.io/v1/namespaces/syncflow/leases/syncagent.{env.agent_name}"
    holder = wait_for(
        lambda: env.service.get(lease_path)["spec"].get("holderIdentity"), timeout=30, what="a leader"
    )
    assert holder.startswith(f"{env.agent_name}.syncagent.kcp.io_")
    _, body = wait_for(lambda: (r := readyz(port_b))[0] == 200 and r, timeout=30, what="watch-b ready")
    assert body["role"] == "standby" and body["leader"] == holder
    env.agent.kill("watch-a")
    new_holder = wait_for(
        lambda: (h := env.service.get(lease_path)["spec"].get("holderIdentity")) != holder and h,
        timeout=15,
        what="watch-b to take over",
    )
    assert new_holder != holder
    wait_for(lambda: readyz(port_b)[1].get("role") == "leader", timeout=15, what="watch-b to report leading")
    env.apply(env.service, CRDS, crd("after.example.com", "After", "afters"))
    env.apply(env.service, PUBLISHED, published("after", "after.example.com", "After"))
    assert env.ready_schema("after").endswith(".afters.after.example.com")


@pytest.fixture(autouse=True)
def _show_logs_on_failure(publish_env: PublishEnv, request: pytest.FixtureRequest) -> None:
    request.node.publish_logs = publish_env.agent.logs
