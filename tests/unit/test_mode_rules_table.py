"""How each mode turns its configuration into the engine's SyncRules, case by case: config in, rule
fields (or a pending entry and its reason) out.

- publish: a PublishedResource (naming, filter, mutation, workspace paths, the orphan policy) and the
  schemas of both sides;
- workload: each Accepted type of a SyncTarget (secrets without tokens, Services without the fields a
  cluster allocates, CRDs never adopted and without status) and the workspace's identity;
- clusters: each (Cluster, type), from the Clusters' readiness, negotiation and sync mode;
- edge: the merged EdgeSyncConfigs (selectors, switches, conversions, upsync) and what each side
  serves.

The modes' watchers read their API objects through the in-memory API servers of
tests/support/fakeapi.py (discovery documents are objects at their paths).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from syncflow.api.edgesyncconfig import EdgeSyncConfig
from syncflow.api.publishedresource import PublishedResource
from syncflow.modes.clusters import rules as clusters
from syncflow.modes.clusters.identity import SyncedType
from syncflow.modes.edge import rules as edge
from syncflow.modes.publish import rules as publish
from syncflow.modes.workload import discovery, target
from syncflow.modes.workload import rules as workload
from syncflow.sync.metadata import CLEANUP_FINALIZER
from syncflow.sync.registry import RuleEntry
from syncflow.sync.rule import (
    Annotate,
    DropAnnotations,
    DropFields,
    IdentityPlacement,
    Mutate,
    NamespaceMapping,
    NamingPlacement,
    Resource,
    Selector,
    SelectorTerm,
    SetFields,
    Side,
    SyncRule,
)
from syncflow.sync.transforms import ALLOCATED_BY_CLUSTER
from tests.support.fakeapi import FakeApi, Obj

# --- publish --------------------------------------------------------------------------------------

SCHEMA: Obj = {
    "group": "certs.example.com",
    "names": {"plural": "sertifikater", "kind": "Sertifikat"},
    "scope": "Namespaced",
    "versions": [
        {"name": "v1beta1", "served": True, "storage": True, "subresources": {"status": {}}},
    ],
}
LOCAL: Obj = {
    "group": "cert-manager.io",
    "names": {"plural": "certificates", "kind": "Certificate"},
    "scope": "Namespaced",
    "versions": [
        {"name": "v1alpha1", "served": True, "storage": False},
        {"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}},
    ],
}
REMOTE_CERTS = Resource(
    group="certs.example.com",
    version="v1beta1",
    plural="sertifikater",
    kind="Sertifikat",
    namespaced=True,
    status_subresource=True,
)
LOCAL_CERTS = Resource(
    group="cert-manager.io",
    version="v1",
    plural="certificates",
    kind="Certificate",
    namespaced=True,
    status_subresource=True,
)

NAMINGS: dict[str, tuple[Obj | None, NamingPlacement]] = {
    "default-naming": (None, NamingPlacement()),
    "namespace-only": ({"namespace": "{{ .ClusterName }}"}, NamingPlacement(namespace="{{ .ClusterName }}")),
    "name-only": (
        {"name": "{{ .Object.metadata.name }}"},
        NamingPlacement(name="{{ .Object.metadata.name }}"),
    ),
    "both": (
        {"namespace": "svc-{{ .ClusterName }}", "name": "x-{{ .Object.metadata.name }}"},
        NamingPlacement(namespace="svc-{{ .ClusterName }}", name="x-{{ .Object.metadata.name }}"),
    ),
}
FILTERS: dict[str, tuple[Obj | None, Selector]] = {
    "no-filter": (None, Selector()),
    "resource-labels": (
        {"resource": {"matchLabels": {"include": "me"}}},
        Selector(labels="include=me"),
    ),
    "namespace-labels": (
        {"namespace": {"matchLabels": {"sync": "true"}}},
        Selector(namespace_labels="sync=true"),
    ),
    "both-with-expressions": (
        {
            "namespace": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}]},
            "resource": {
                "matchLabels": {"include": "me"},
                "matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}],
            },
        },
        Selector(labels="include=me,!skip", namespace_labels="env notin (dev)"),
    ),
}
SPEC_STEP: Obj = {"regex": {"path": "spec.secretName", "pattern": "(.+)", "replacement": "cert-$1"}}
STATUS_STEP: Obj = {"delete": {"path": "status.internalRef"}}
MUTATIONS: dict[str, tuple[Obj | None, tuple[Any, ...]]] = {
    "no-mutation": (None, ()),
    "empty-mutation": ({"spec": [], "status": []}, ()),
    "spec-mutation": ({"spec": [SPEC_STEP]}, (Mutate(spec=(SPEC_STEP,)),)),
    "status-mutation": ({"status": [STATUS_STEP]}, (Mutate(status=(STATUS_STEP,)),)),
    "both-mutations": (
        {"spec": [SPEC_STEP], "status": [STATUS_STEP]},
        (Mutate(spec=(SPEC_STEP,), status=(STATUS_STEP,)),),
    ),
}
WORKSPACE_PATHS: dict[str, tuple[bool | None, bool]] = {
    "paths-unset": (None, False),
    "paths-off": (False, False),
    "paths-on": (True, True),
}
ORPHAN_POLICIES = {"keep": "keep", "delete": "delete"}

PUBLISH_CASES = list(itertools.product(NAMINGS, FILTERS, MUTATIONS, WORKSPACE_PATHS, ORPHAN_POLICIES))


def published(naming: str, filter_: str, mutation: str, paths: str) -> PublishedResource:
    spec: Obj = {"resource": {"apiGroup": "cert-manager.io", "kind": "Certificate", "versions": ["v1"]}}
    for field, value in (
        ("naming", NAMINGS[naming][0]),
        ("filter", FILTERS[filter_][0]),
        ("mutation", MUTATIONS[mutation][0]),
        ("enableWorkspacePaths", WORKSPACE_PATHS[paths][0]),
    ):
        if value is not None:
            spec[field] = value
    manifest = {
        "apiVersion": "syncagent.kcp.io/v1alpha1",
        "kind": "PublishedResource",
        "metadata": {"name": "publish-certs"},
        "spec": spec,
    }
    return PublishedResource.parse(manifest)


@pytest.mark.parametrize(
    ("naming", "filter_", "mutation", "paths", "orphans"),
    PUBLISH_CASES,
    ids=["|".join(c) for c in PUBLISH_CASES],
)
def test_a_published_resource_becomes_its_rule(
    naming: str, filter_: str, mutation: str, paths: str, orphans: str
) -> None:
    settings = publish.RuleSettings(agent="certs", state_namespace="syncagent-state", orphan_policy=orphans)
    rule = publish.build_rule(published(naming, filter_, mutation, paths), SCHEMA, LOCAL, settings)
    assert rule == SyncRule(
        name="publish-certs",
        agent="certs",
        source=Side(endpoint="kcp", resource=REMOTE_CERTS),  # each object's own workspace
        target=Side(endpoint="service", resource=LOCAL_CERTS),
        selector=FILTERS[filter_][1],
        placement=NAMINGS[naming][1],
        transforms=MUTATIONS[mutation][1],
        unmatched=ORPHAN_POLICIES[orphans],
        state_namespace="syncagent-state",
        adopt="merge",
        workspace_paths=WORKSPACE_PATHS[paths][1],
    )
    assert (rule.status, rule.deletion, rule.finalizer, rule.spec) == (
        "return",
        "propagate",
        CLEANUP_FINALIZER,
        True,
    )


@pytest.mark.parametrize(
    ("scope", "versions", "expected"),
    [
        ("Namespaced", [("v1", True, False)], ("v1", True, False)),
        ("Cluster", [("v1", True, True)], ("v1", False, True)),
        ("Namespaced", [("v1", False, True), ("v2", True, False)], ("v2", True, False)),
        ("Cluster", [("v1alpha1", False, False), ("v1", True, True)], ("v1", False, True)),
    ],
    ids=["namespaced", "cluster-scoped-with-status", "storage-is-v2", "storage-has-the-status"],
)
def test_a_schema_becomes_its_resource(
    scope: str, versions: list[tuple[str, bool, bool]], expected: tuple[str, bool, bool]
) -> None:
    spec = {
        "group": "g.example.com",
        "names": {"plural": "things", "kind": "Thing"},
        "scope": scope,
        "versions": [
            {
                "name": name,
                "served": True,
                "storage": storage,
                **({"subresources": {"status": {}}} if status else {}),
            }
            for name, storage, status in versions
        ],
    }
    version, namespaced, status = expected
    assert publish.resource_of(spec) == Resource(
        group="g.example.com",
        version=version,
        plural="things",
        kind="Thing",
        namespaced=namespaced,
        status_subresource=status,
    )


def test_a_release_rule_names_only_the_source() -> None:
    rule = publish.release_rule(SCHEMA, "publish-certs", "certs")
    assert (rule.name, rule.agent, rule.source, rule.target.resource) == (
        "publish-certs",
        "certs",
        Side(endpoint="kcp", resource=REMOTE_CERTS),
        REMOTE_CERTS,
    )


# --- workload -------------------------------------------------------------------------------------


def resource(group: str, version: str, plural: str, kind: str, namespaced: bool = True) -> Resource:
    return Resource(group=group, version=version, plural=plural, kind=kind, namespaced=namespaced)


WORKLOAD_TYPES: dict[str, tuple[discovery.TypeRef, Resource, Selector, tuple[Any, ...], str, str]] = {
    # name: (ref, resource, selector, extra transforms, status, adopt)
    "configmaps": (
        discovery.TypeRef("", "v1", "configmaps"),
        resource("", "v1", "configmaps", "ConfigMap"),
        Selector(),
        (),
        "return",
        "refuse",
    ),
    "secrets": (
        discovery.TypeRef("", "v1", "secrets"),
        resource("", "v1", "secrets", "Secret"),
        Selector(fields="type!=kubernetes.io/service-account-token"),
        (),
        "return",
        "refuse",
    ),
    "services": (
        discovery.TypeRef("", "v1", "services"),
        resource("", "v1", "services", "Service"),
        Selector(),
        (ALLOCATED_BY_CLUSTER["services"],),
        "return",
        "refuse",
    ),
    "deployments": (
        discovery.TypeRef("apps", "v1", "deployments"),
        resource("apps", "v1", "deployments", "Deployment"),
        Selector(),
        (),
        "return",
        "refuse",
    ),
    "crds": (
        discovery.TypeRef(*discovery.CRD_TYPE),
        resource(
            "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False
        ),
        Selector(),
        (),
        "none",
        "never",
    ),
    "a-crds-type": (
        discovery.TypeRef("widgets.example.com", "v1", "widgets", from_crd=True),
        resource("widgets.example.com", "v1", "widgets", "Widget"),
        Selector(),
        (),
        "return",
        "refuse",
    ),
    "cluster-scoped": (
        discovery.TypeRef("rbac.authorization.k8s.io", "v1", "clusterroles"),
        resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
        Selector(),
        (),
        "return",
        "refuse",
    ),
}
WORKSPACES = {
    "path-is-the-cluster": workload.Workspace(cluster="2abc", path="2abc", sync_target="east", uid="u-1"),
    "path-differs": workload.Workspace(cluster="2abc", path="root:org:ws", sync_target="east", uid="u-1"),
    "other-target": workload.Workspace(cluster="7xyz", path="root:b", sync_target="west", uid="u-2"),
}
WORKLOAD_CASES = list(itertools.product(WORKLOAD_TYPES, WORKSPACES))


@pytest.mark.parametrize(("kind", "space"), WORKLOAD_CASES, ids=["|".join(c) for c in WORKLOAD_CASES])
def test_an_accepted_type_of_a_sync_target_becomes_its_rule(kind: str, space: str) -> None:
    ref, res, selector, extra, status, adopt = WORKLOAD_TYPES[kind]
    ws = WORKSPACES[space]
    check = discovery.TypeCheck(ref, "Accepted", "served on both sides", res, res)
    rule = workload.build_rule(check, ws, "syncer-east", "kcp-syncer-state")
    previous = () if ws.path == ws.cluster else (target.finalizer(ws.path, ws.sync_target),)
    assert rule == SyncRule(
        name=ref.group_resource,
        agent="syncer-east",
        source=Side(endpoint="kcp", resource=res, cluster=ws.cluster),
        target=Side(endpoint="cluster", resource=res),
        selector=selector,
        placement=NamespaceMapping(
            locator={"syncTarget": {"cluster": ws.cluster, "name": ws.sync_target, "uid": ws.uid}}
        ),
        transforms=(
            DropAnnotations(prefixes=("kcp.io/", "experimental.status.workload.kcp.io/")),
            Annotate(
                annotations={"syncer.kcp.io/sync-target": ws.sync_target, "syncer.kcp.io/workspace": ws.path},
                timestamp="syncer.kcp.io/last-sync",
            ),
            *extra,
        ),
        status=status,
        adopt=adopt,
        finalizer=target.finalizer(ws.cluster, ws.sync_target),
        previous_finalizers=previous,
        release="delete",
        state_namespace="kcp-syncer-state",
        drift="revert",
    )
    assert rule.finalizer is not None and rule.finalizer.startswith("workload.kcp.io/syncer-")
    assert rule.finalizer not in previous


CORE_V1: Obj = {
    "resources": [
        {"name": "configmaps", "kind": "ConfigMap", "namespaced": True},
        {"name": "secrets", "kind": "Secret", "namespaced": True},
    ]
}
APPS_V1: Obj = {
    "resources": [
        {"name": "deployments", "kind": "Deployment", "namespaced": True},
        {"name": "deployments/status", "kind": "Deployment", "namespaced": True},
    ]
}
CLUSTER_SCOPED_DEPLOYMENTS: Obj = {
    "resources": [{"name": "deployments", "kind": "Deployment", "namespaced": False}]
}


def synced(group: str, plural: str, state: str, message: str = "") -> Obj:
    return {"group": group, "resource": plural, "versions": ["v1"], "state": state, "message": message}


WORKLOAD_ENTRIES: dict[str, tuple[list[Obj], dict[str, Obj], dict[str, tuple[str, str]]]] = {
    # name: (status.syncedResources, the physical cluster's discovery, rule → (state, reason part))
    "all-accepted": (
        [synced("", "configmaps", "Accepted"), synced("apps", "deployments", "Accepted")],
        {"/api/v1": CORE_V1, "/apis/apps/v1": APPS_V1},
        {"configmaps": ("ready", ""), "deployments.apps": ("ready", "")},
    ),
    "pending-in-kcp": (
        [synced("", "configmaps", "Pending", "waiting for the APIBinding")],
        {"/api/v1": CORE_V1},
        {"configmaps": ("pending", "waiting for the APIBinding")},
    ),
    "incompatible-in-kcp": (
        [synced("apps", "deployments", "Incompatible", "lacks spec.paused")],
        {"/apis/apps/v1": APPS_V1},
        {"deployments.apps": ("pending", "lacks spec.paused")},
    ),
    "not-served-downstream": (
        [synced("apps", "deployments", "Accepted")],
        {"/api/v1": CORE_V1},
        {"deployments.apps": ("pending", "does not serve apps/v1 deployments")},
    ),
    "scope-differs": (
        [synced("apps", "deployments", "Accepted")],
        {"/apis/apps/v1": CLUSTER_SCOPED_DEPLOYMENTS},
        {"deployments.apps": ("pending", "namespaced on one side only")},
    ),
    "none-synced": ([], {"/api/v1": CORE_V1}, {}),
}


@pytest.mark.parametrize("case", WORKLOAD_ENTRIES)
def test_a_sync_targets_synced_resources_become_entries(case: str) -> None:
    resources, physical_discovery, expected = WORKLOAD_ENTRIES[case]
    kcp, physical = FakeApi(), FakeApi()
    kcp.put("/api/v1", CORE_V1)
    kcp.put("/apis/apps/v1", APPS_V1)
    for path, document in physical_discovery.items():
        physical.put(path, document)
    kcp.put(
        f"{target.SYNC_TARGETS}/east",
        {"metadata": {"name": "east"}, "spec": {}, "status": {"syncedResources": resources}},
    )
    ws = WORKSPACES["path-differs"]
    rules = workload.WorkloadRules(kcp, physical, ws, "syncer-east", "state")  # type: ignore[arg-type]
    entries = rules.desired()
    assert {name: entry.state for name, entry in entries.items()} == {n: s for n, (s, _) in expected.items()}
    for name, (state, reason) in expected.items():
        entry = entries[name]
        assert reason in entry.reason
        assert (entry.rule is not None) == (state == "ready")
        if entry.rule is not None:
            assert entry.rule.source.cluster == ws.cluster and entry.rule.name == name
    calls = kcp.calls["GET"]
    assert rules.desired() == entries
    assert kcp.calls["GET"] == calls + 1, "an unchanged SyncTarget is read again, its types are not"


@pytest.mark.parametrize("deleting", [False, True], ids=["deleting", "deleted"])
def test_a_deleting_or_deleted_sync_target_has_no_rules(deleting: bool) -> None:
    kcp = FakeApi()
    if deleting:
        kcp.put(
            f"{target.SYNC_TARGETS}/east",
            {"metadata": {"name": "east", "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["f"]}},
        )
    rules = workload.WorkloadRules(kcp, FakeApi(), WORKSPACES["path-differs"], "a", "s")  # type: ignore[arg-type]
    assert rules.desired() == {}


# --- clusters -------------------------------------------------------------------------------------

CONFIGMAPS = Resource(group="", version="v1", plural="configmaps", kind="ConfigMap", namespaced=True)
SERVICES = Resource(group="", version="v1", plural="services", kind="Service", namespaced=True)
DEPLOYMENTS = Resource(
    group="apps",
    version="v1",
    plural="deployments",
    kind="Deployment",
    namespaced=True,
    status_subresource=True,
)
CLUSTER_TYPES = {
    "configmaps": (SyncedType("configmaps"), CONFIGMAPS),
    "services": (SyncedType("services"), SERVICES),
    "deployments": (SyncedType("deployments", "apps"), DEPLOYMENTS),
}
CLUSTER_NAMES = ["east", "a-very-long-cluster-name-" + "x" * 60]
CLEANUPS = ["keep", "delete"]
CLUSTER_RULE_CASES = list(itertools.product(CLUSTER_TYPES, range(len(CLUSTER_NAMES)), CLEANUPS))


@pytest.mark.parametrize(
    ("kind", "which", "cleanup"),
    CLUSTER_RULE_CASES,
    ids=[f"{k}|{'long-name' if w else 'east'}|{c}" for k, w, c in CLUSTER_RULE_CASES],
)
def test_a_cluster_and_a_type_become_their_rule(kind: str, which: int, cleanup: str) -> None:
    synced_type, res = CLUSTER_TYPES[kind]
    name = CLUSTER_NAMES[which]
    rule = clusters.build_rule(name, res, "root:org:ws", "clusters", "syncflow-state", cleanup)  # type: ignore[arg-type]
    extra = (ALLOCATED_BY_CLUSTER["services"],) if kind == "services" else ()
    assert rule == SyncRule(
        name=f"{name}~{synced_type.group_resource}",
        agent="clusters",
        source=Side(endpoint="kcp", resource=res, cluster="root:org:ws"),
        target=Side(endpoint=f"cluster:{name}", resource=res),
        selector=Selector(labels=f"workloads.kcp.dev/cluster={name}"),
        placement=IdentityPlacement(),
        transforms=(DropAnnotations(prefixes=("kcp.io/",)), *extra),
        unmatched="delete",
        finalizer=rule.finalizer,
        state_namespace="syncflow-state",
        release=cleanup,
    )
    assert rule.finalizer is not None and rule.finalizer.startswith("workload.kcp.dev/syncer-")
    assert len(rule.finalizer.split("/", 1)[1]) <= 63, "a finalizer's name part is a DNS label"
    if which == 0:
        assert rule.finalizer == "workload.kcp.dev/syncer-east"


def cluster(
    name: str, ready: str | None, synced_types: dict[str, str], mode: str | None = None, **meta: Any
) -> Obj:
    conditions = [] if ready is None else [{"type": "Ready", "status": ready, "message": "probe says so"}]
    entries = [
        {
            "group": SyncedType.parse(t).group,
            "resource": SyncedType.parse(t).plural,
            "versions": ["v1"],
            "state": s,
            "message": f"{t} is {s}",
        }
        for t, s in synced_types.items()
    ]
    spec = {"syncMode": mode} if mode else {}
    return {
        "metadata": {"name": name, **meta},
        "spec": spec,
        "status": {"conditions": conditions, "syncedResources": entries},
    }


BOTH_ACCEPTED = {"configmaps": "Accepted", "deployments.apps": "Accepted"}
CLUSTER_ENTRIES: dict[str, tuple[Obj, dict[str, tuple[str, str]]]] = {
    # name: (Cluster, rule → (state, reason part)) for the central process (Push clusters)
    "ready-and-negotiated": (
        cluster("east", "True", BOTH_ACCEPTED),
        {"east~configmaps": ("ready", ""), "east~deployments.apps": ("ready", "")},
    ),
    "not-ready": (
        cluster("east", "False", BOTH_ACCEPTED),
        {
            "east~configmaps": ("pending", "not Ready: probe says so"),
            "east~deployments.apps": ("pending", "not Ready"),
        },
    ),
    "never-probed": (
        cluster("east", None, BOTH_ACCEPTED),
        {
            "east~configmaps": ("pending", "not probed yet"),
            "east~deployments.apps": ("pending", "not probed yet"),
        },
    ),
    "one-type-incompatible": (
        cluster("east", "True", {"configmaps": "Accepted", "deployments.apps": "Incompatible"}),
        {
            "east~configmaps": ("ready", ""),
            "east~deployments.apps": ("pending", "deployments.apps is Incompatible"),
        },
    ),
    "not-negotiated-yet": (
        cluster("east", "True", {"configmaps": "Accepted"}),
        {"east~configmaps": ("ready", ""), "east~deployments.apps": ("pending", "not negotiated yet")},
    ),
    "explicit-push": (
        cluster("east", "True", BOTH_ACCEPTED, mode="Push"),
        {"east~configmaps": ("ready", ""), "east~deployments.apps": ("ready", "")},
    ),
    "pulled-by-its-own-syncer": (cluster("east", "True", BOTH_ACCEPTED, mode="Pull"), {}),
    "deleting": (
        cluster("east", "True", BOTH_ACCEPTED, deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["f"]),
        {},
    ),
}


@pytest.mark.parametrize("case", CLUSTER_ENTRIES)
def test_the_clusters_become_entries_per_cluster_and_type(case: str) -> None:
    obj, expected = CLUSTER_ENTRIES[case]
    kcp = FakeApi()
    kcp.put("/api/v1", CORE_V1)
    kcp.put("/apis/apps/v1", APPS_V1)
    kcp.put(f"{clusters.PATH}/east", obj)
    rules = clusters.ClustersRules(
        kcp,  # type: ignore[arg-type]
        workspace="root:org:ws",
        agent="clusters",
        state_namespace="syncflow-state",
        types=[SyncedType("configmaps"), SyncedType("deployments", "apps")],
    )
    entries = rules.desired()
    assert {name: entry.state for name, entry in entries.items()} == {n: s for n, (s, _) in expected.items()}
    for name, (_, reason) in expected.items():
        assert reason in entries[name].reason
    assert rules.serving == {name for name, (state, _) in expected.items() if state == "ready"}
    ready = entries.get("east~deployments.apps")
    if ready is not None and ready.rule is not None:
        assert ready.rule.source.resource == DEPLOYMENTS, "kcp's schema of the type"


@pytest.mark.parametrize(
    ("mode", "only_cluster", "syncs"),
    [
        (None, None, True),
        ("Push", None, True),
        ("Pull", None, False),
        ("None", None, False),
        (None, "east", False),
        ("Push", "east", False),
        ("Pull", "east", True),
        ("None", "east", True),
        ("Pull", "west", False),
    ],
)
def test_which_process_syncs_to_a_cluster(mode: str | None, only_cluster: str | None, syncs: bool) -> None:
    assert clusters.syncs(cluster("east", "True", {}, mode=mode), only_cluster) is syncs


def test_a_syncer_of_one_cluster_reads_only_its_own() -> None:
    kcp = FakeApi()
    kcp.put("/api/v1", CORE_V1)
    kcp.put(f"{clusters.PATH}/east", cluster("east", "True", {"configmaps": "Accepted"}, mode="Pull"))
    kcp.put(f"{clusters.PATH}/west", cluster("west", "True", {"configmaps": "Accepted"}, mode="Pull"))
    central = clusters.ClustersRules(kcp, "ws", "a", "s", [SyncedType("configmaps")])  # type: ignore[arg-type]
    own = clusters.ClustersRules(kcp, "ws", "a", "s", [SyncedType("configmaps")], only_cluster="east")  # type: ignore[arg-type]
    assert (central.cluster_selector, own.cluster_selector) == ("", "metadata.name=east")
    assert central.desired() == {}, "pulled clusters are their syncers' business"
    assert set(own.desired()) == {"east~configmaps"}


# --- edge -----------------------------------------------------------------------------------------

MAILBOX = edge.Mailbox(cluster="mb-1", syncer="pc1")
WIDGETS_V1: Obj = {"resources": [{"name": "widgets", "kind": "Widget", "namespaced": True}]}
CRDS_V1: Obj = {
    "resources": [
        {"name": "customresourcedefinitions", "kind": "CustomResourceDefinition", "namespaced": False}
    ]
}
CONFIGMAP_RES = CONFIGMAPS
WIDGETS = Resource(group="acme.io", version="v1", plural="widgets", kind="Widget", namespaced=True)
CRD_RES = Resource(
    group="apiextensions.k8s.io",
    version="v1",
    plural="customresourcedefinitions",
    kind="CustomResourceDefinition",
    namespaced=False,
)


def cm_selector(**fields: Any) -> Obj:
    return {"version": "v1", "kind": "ConfigMap", **fields}


def edge_config(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "edge.kcp.io/v1alpha1",
        "kind": "EdgeSyncConfig",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": spec,
    }


def down_rule(name: str, selector: Selector, **changes: Any) -> SyncRule:
    fields: dict[str, Any] = {
        "name": name,
        "agent": "pc1",
        "source": Side(endpoint="kcp", resource=CONFIGMAP_RES, cluster="mb-1"),
        "target": Side(endpoint="pcluster", resource=CONFIGMAP_RES),
        "selector": selector,
        "placement": IdentityPlacement(),
        "status": "return",
        "deletion": "propagate",
        "unmatched": "delete",
        "release": "delete",
        "finalizer": "edge.kcp.io/syncer-pc1",
        "state_namespace": "edge-state",
        **changes,
    }
    return SyncRule(**fields)


def up_rule(name: str, res: Resource, selector: Selector) -> SyncRule:
    return SyncRule(
        name=name,
        agent="pc1",
        source=Side(endpoint="pcluster", resource=res, cluster="pc1"),
        target=Side(endpoint="kcp", resource=res, cluster="mb-1"),
        selector=selector,
        status="carry",
        unmatched="delete",
        finalizer=None,
        watch_source=False,
    )


A = SelectorTerm(namespaces=("app",), names=("a",))
B = SelectorTerm(namespaces=("app",), labels="tier=web")
CRD_RENAME = {
    "upstream": {
        "group": "apiextensions.k8s.io",
        "version": "v1",
        "kind": "CustomResourceDefinition",
        "name": "widgets.mb.acme.io",
    },
    "downstream": {
        "group": "apiextensions.k8s.io",
        "version": "v1",
        "kind": "CustomResourceDefinition",
        "name": "widgets.acme.io",
    },
}
TO_OTHER_KIND = {
    "upstream": {"version": "v1", "kind": "ConfigMap", "name": "w1"},
    "downstream": {"group": "acme.io", "version": "v1", "kind": "Widget", "name": "w1"},
}
SERVED_BOTH = {"mailbox": {"/api/v1": CORE_V1}, "pcluster": {"/api/v1": CORE_V1}}
EDGE_CASES: dict[str, tuple[list[Obj], dict[str, dict[str, Obj]], dict[str, SyncRule | str]]] = {
    # name: (configs, discovery per side, rule name → rule, or the pending reason's part)
    "one-selector": (
        [edge_config("pc1", downSyncedResources=[cm_selector(namespace="app", name="a")])],
        SERVED_BOTH,
        {"down:configmaps": down_rule("down:configmaps", Selector(any_of=(A,)))},
    ),
    "two-configs-union": (
        [
            edge_config("pc1", downSyncedResources=[cm_selector(namespace="app", name="a")]),
            edge_config(
                "web",
                downSyncedResources=[
                    cm_selector(namespace="app", labelSelector={"matchLabels": {"tier": "web"}})
                ],
            ),
        ],
        SERVED_BOTH,
        {"down:configmaps": down_rule("down:configmaps", Selector(any_of=(A, B)))},
    ),
    "reported-state-off-everywhere": (
        [
            edge_config(
                "pc1", returnReportedState=False, downSyncedResources=[cm_selector(namespace="app", name="a")]
            )
        ],
        SERVED_BOTH,
        {"down:configmaps": down_rule("down:configmaps", Selector(any_of=(A,)), status="none")},
    ),
    "reported-state-off-for-one": (
        [
            edge_config("pc1", downSyncedResources=[cm_selector(namespace="app", name="a")]),
            edge_config(
                "quiet",
                returnReportedState=False,
                downSyncedResources=[
                    cm_selector(namespace="app", labelSelector={"matchLabels": {"tier": "web"}})
                ],
            ),
        ],
        SERVED_BOTH,
        {
            "down:configmaps": down_rule(
                "down:configmaps", Selector(any_of=(A, B)), status_for=Selector(any_of=(A,))
            )
        },
    ),
    "deletion-kept-for-one": (
        [
            edge_config(
                "keeper",
                propagateDeletion=False,
                downSyncedResources=[cm_selector(namespace="app", name="a")],
            ),
            edge_config(
                "pc1",
                downSyncedResources=[
                    cm_selector(namespace="app", labelSelector={"matchLabels": {"tier": "web"}})
                ],
            ),
        ],
        SERVED_BOTH,
        {
            "down:configmaps": down_rule(
                "down:configmaps", Selector(any_of=(A, B)), keep=Selector(any_of=(A,))
            )
        },
    ),
    "not-served-in-the-p-cluster": (
        [edge_config("pc1", downSyncedResources=[cm_selector(namespace="app", name="a")])],
        {"mailbox": {"/api/v1": CORE_V1}, "pcluster": {}},
        {"down:configmaps": "ConfigMap.core/v1 is not served by the p-cluster yet"},
    ),
    "not-served-in-the-mailbox": (
        [edge_config("pc1", downSyncedResources=[cm_selector(namespace="app", name="a")])],
        {"mailbox": {}, "pcluster": {"/api/v1": CORE_V1}},
        {"down:configmap.": "ConfigMap.core/v1 is not served by the mailbox workspace yet"},
    ),
    "upsync": (
        [edge_config("pc1", upSyncedResources=[cm_selector(namespace="app", name="a")])],
        SERVED_BOTH,
        {"up:configmaps": up_rule("up:configmaps", CONFIGMAP_RES, Selector(any_of=(A,)))},
    ),
    "upsync-not-bound-in-the-mailbox": (
        [edge_config("pc1", upSyncedResources=[cm_selector(namespace="app", name="a")])],
        {"mailbox": {}, "pcluster": {"/api/v1": CORE_V1}},
        {"up:configmaps": "bind the APIExport that serves it"},
    ),
    "crd-upsync-refused": (
        [
            edge_config(
                "pc1",
                upSyncedResources=[
                    {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"}
                ],
            )
        ],
        {
            "mailbox": {"/apis/apiextensions.k8s.io/v1": CRDS_V1},
            "pcluster": {"/apis/apiextensions.k8s.io/v1": CRDS_V1},
        },
        {},
    ),
    "crd-renamed-downstream": (
        [
            edge_config(
                "pc1",
                downSyncedResources=[
                    {
                        "group": "apiextensions.k8s.io",
                        "version": "v1",
                        "kind": "CustomResourceDefinition",
                        "name": "widgets.acme.io",
                    }
                ],
                conversions=[CRD_RENAME],
            )
        ],
        {
            "mailbox": {"/apis/apiextensions.k8s.io/v1": CRDS_V1},
            "pcluster": {"/apis/apiextensions.k8s.io/v1": CRDS_V1},
        },
        {
            "down:customresourcedefinitions.apiextensions.k8s.io": down_rule(
                "down:customresourcedefinitions.apiextensions.k8s.io",
                Selector(any_of=(SelectorTerm(names=("widgets.mb.acme.io",)),)),
                source=Side(endpoint="kcp", resource=CRD_RES, cluster="mb-1"),
                target=Side(endpoint="pcluster", resource=CRD_RES),
                placement=IdentityPlacement(names={"widgets.mb.acme.io": "widgets.acme.io"}),
                transforms=(SetFields(name="widgets.mb.acme.io", fields={"spec.group": "acme.io"}),),
            )
        },
    ),
    "converted-to-another-kind": (
        [edge_config("pc1", downSyncedResources=[cm_selector(namespace="app")], conversions=[TO_OTHER_KIND])],
        {"mailbox": {"/api/v1": CORE_V1}, "pcluster": {"/api/v1": CORE_V1, "/apis/acme.io/v1": WIDGETS_V1}},
        {
            "down:configmaps": down_rule(
                "down:configmaps",
                Selector(any_of=(SelectorTerm(namespaces=("app",)),), exclude_names=("w1",)),
            ),
            "down:configmaps~w1": down_rule(
                "down:configmaps~w1",
                Selector(names=("w1",)),
                target=Side(endpoint="pcluster", resource=WIDGETS),
                placement=IdentityPlacement(names={"w1": "w1"}),
            ),
        },
    ),
    "converted-to-a-kind-not-served-yet": (
        [edge_config("pc1", downSyncedResources=[cm_selector(namespace="app")], conversions=[TO_OTHER_KIND])],
        SERVED_BOTH,
        {
            "down:configmaps": down_rule(
                "down:configmaps",
                Selector(any_of=(SelectorTerm(namespaces=("app",)),), exclude_names=("w1",)),
            ),
            "down:configmaps~w1": "Widget.acme.io/v1 is not served by the p-cluster yet",
        },
    ),
    "no-configs": ([], SERVED_BOTH, {}),
}


@pytest.mark.parametrize("case", EDGE_CASES)
def test_edge_sync_configs_become_rules(case: str) -> None:
    configs, served, expected = EDGE_CASES[case]
    mailbox, pcluster = FakeApi(host="mailbox"), FakeApi(host="pcluster")
    for api, side in ((mailbox, "mailbox"), (pcluster, "pcluster")):
        for path, document in served[side].items():
            api.put(path, document)
    for config in configs:
        EdgeSyncConfig.parse(config)  # each case's config is valid
        mailbox.put(f"{edge.EDGE_SYNC_CONFIGS}/{config['metadata']['name']}", config)
    rules = edge.EdgeRules(mailbox, pcluster, MAILBOX, "pc1", "edge-state")  # type: ignore[arg-type]
    entries = rules.desired()
    assert set(entries) == set(expected)
    for name, want in expected.items():
        entry = entries[name]
        if isinstance(want, str):
            assert (entry.state, entry.rule) == ("pending", None) and want in entry.reason
        else:
            assert entry == RuleEntry.ready(want)


def test_edge_discovery_is_trusted_for_a_while_once_found() -> None:
    mailbox, pcluster = FakeApi(host="mailbox"), FakeApi(host="pcluster")
    mailbox.put("/api/v1", CORE_V1)
    mailbox.put(
        f"{edge.EDGE_SYNC_CONFIGS}/pc1",
        edge_config("pc1", downSyncedResources=[cm_selector(namespace="app", name="a")]),
    )
    rules = edge.EdgeRules(mailbox, pcluster, MAILBOX, "pc1", "edge-state")  # type: ignore[arg-type]
    assert rules.desired()["down:configmaps"].state == "pending"
    pcluster.put("/api/v1", CORE_V1)
    assert rules.desired()["down:configmaps"].state == "ready", "a type not served yet is asked again"
    before = (mailbox.calls["GET"], pcluster.calls["GET"])
    rules.desired()
    assert (mailbox.calls["GET"], pcluster.calls["GET"]) == (before[0] + 1, before[1]), "only the configs"


def test_workload_rules_take_only_drop_fields_a_cluster_allocates() -> None:
    assert set(ALLOCATED_BY_CLUSTER) == {"services"}
    assert isinstance(ALLOCATED_BY_CLUSTER["services"], DropFields)
