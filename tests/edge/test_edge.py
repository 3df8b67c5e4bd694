"""Edge mode end to end (issue 13): the KubeStellar 0.14 feasibility scenarios on syncflow's engine —
an application deployed from the mailbox just by manifests, upsync of reports polled from the p-cluster,
denatured objects renatured downstream with their state returned — plus selectors, configs merged
with per-object deletion and reported-state switches, a refused CRD upsync, and an unreachable p-cluster."""

from __future__ import annotations

from typing import Any

import pytest

from syncflow.kube.clients import for_cluster, for_url
from syncflow.kube.jsonapi import JsonApi
from syncflow.sync.registry import RuleRegistry
from tests.support.edge_env import CONFIGS, EdgeEnv
from tests.support.kcp import bind_compute
from tests.support.queues import failures
from tests.support.waiting import wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def crd(
    group: str, plural: str, kind: str, scope: str = "Namespaced", name: str | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name or f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


@pytest.fixture(autouse=True)
def _one_config_set_per_test(edge_env: EdgeEnv) -> None:
    """Configs are merged workspace-wide: each test starts with none."""
    for config in edge_env.kcp.get(CONFIGS).get("items") or []:
        edge_env.kcp.delete(f"{CONFIGS}/{config['metadata']['name']}")


def wait_object(
    api: JsonApi, path: str, what: str, env: EdgeEnv, check: Any = None, timeout: float = 30
) -> Any:
    def found() -> Any:
        if not api.exists(path):
            return None
        obj = api.get(path)
        return obj if check is None or check(obj) else None

    return wait_for(found, timeout=timeout, what=lambda: f"{what}\n{env.agent.logs()}")


def wait_gone(api: JsonApi, path: str, what: str, env: EdgeEnv, timeout: float = 30) -> None:
    wait_for(lambda: not api.exists(path), timeout=timeout, what=lambda: f"{what}\n{env.agent.logs()}")


def test_an_application_goes_down_by_manifests_with_its_state_returned(edge_env: EdgeEnv) -> None:
    """Kyverno-like: its CRD, namespace, RBAC, ServiceAccount, ConfigMap, Deployment and a policy object."""
    env = edge_env
    bind_compute(env.kcp)
    env.kcp.create(CRDS, crd("policies.acme.io", "policies", "Policy"))
    env.namespace("guard")
    env.kcp.create("/api/v1/namespaces/guard/serviceaccounts", {"metadata": {"name": "guard"}})
    env.kcp.create(
        "/api/v1/namespaces/guard/configmaps", {"metadata": {"name": "guard"}, "data": {"level": "strict"}}
    )
    env.kcp.create(
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        {
            "metadata": {"name": "guard"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}],
        },
    )
    env.kcp.create(
        "/apis/apps/v1/namespaces/guard/deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "guard"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "guard"}},
                "template": {
                    "metadata": {"labels": {"app": "guard"}},
                    "spec": {"containers": [{"name": "guard", "image": "guard:1"}]},
                },
            },
        },
    )
    wait_for(
        lambda: env.kcp.exists("/apis/policies.acme.io/v1"),
        timeout=30,
        what="policies served in the mailbox",
    )
    env.kcp.create(
        "/apis/policies.acme.io/v1/namespaces/guard/policies",
        {
            "apiVersion": "policies.acme.io/v1",
            "kind": "Policy",
            "metadata": {"name": "sample"},
            "spec": {"rule": "x"},
        },
    )
    env.config(
        "app",
        {
            "downSyncedResources": [
                {"version": "v1", "kind": "Namespace", "name": "guard"},
                {
                    "group": "apiextensions.k8s.io",
                    "version": "v1",
                    "kind": "CustomResourceDefinition",
                    "name": "policies.policies.acme.io",
                },
                {"version": "v1", "kind": "ServiceAccount", "namespace": "guard", "name": "guard"},
                {"version": "v1", "kind": "ConfigMap", "namespace": "guard", "name": "guard"},
                {
                    "group": "rbac.authorization.k8s.io",
                    "version": "v1",
                    "kind": "ClusterRole",
                    "name": "guard",
                },
                {
                    "group": "apps",
                    "version": "v1",
                    "kind": "Deployment",
                    "namespace": "guard",
                    "name": "guard",
                },
                {"group": "policies.acme.io", "version": "v1", "kind": "Policy", "namespace": "guard"},
            ]
        },
    )
    for path in (
        "/api/v1/namespaces/guard",
        f"{CRDS}/policies.policies.acme.io",
        "/api/v1/namespaces/guard/serviceaccounts/guard",
        "/api/v1/namespaces/guard/configmaps/guard",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/guard",
        "/apis/apps/v1/namespaces/guard/deployments/guard",
    ):
        wait_object(env.pcluster, path, f"{path} in the p-cluster", env)
    policy = wait_object(
        env.pcluster,
        "/apis/policies.acme.io/v1/namespaces/guard/policies/sample",
        "the policy (after its CRD)",
        env,
    )
    assert policy["spec"] == {"rule": "x"}
    # the p-cluster reports state (here: the test plays its controllers); it comes back to the mailbox
    env.pcluster.merge_patch(
        "/apis/policies.acme.io/v1/namespaces/guard/policies/sample/status", {"status": {"ready": True}}
    )
    env.pcluster.merge_patch(
        "/apis/apps/v1/namespaces/guard/deployments/guard/status",
        {"status": {"replicas": 1, "readyReplicas": 1}},
    )
    wait_object(
        env.kcp,
        "/apis/policies.acme.io/v1/namespaces/guard/policies/sample",
        "the policy's state in the mailbox",
        env,
        check=lambda o: (o.get("status") or {}).get("ready") is True,
    )
    wait_object(
        env.kcp,
        "/apis/apps/v1/namespaces/guard/deployments/guard",
        "the Deployment's state in the mailbox",
        env,
        check=lambda o: (o.get("status") or {}).get("readyReplicas") == 1,
    )
    status = env.kcp.get(f"{CONFIGS}/app")["status"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "Ready": "True",
        "Conflict": "False",
        "Refused": "False",
        "Conflicts": "False",
        "Parked": "False",
    }


def test_reports_created_in_the_p_cluster_are_upsynced_and_read_through_the_export(edge_env: EdgeEnv) -> None:
    """A report type exported from the workload-management workspace, bound in the mailbox; the p-cluster's
    reports appear in the mailbox by polling and are readable across mailboxes through the export."""
    env = edge_env
    apis = "/apis/apis.kcp.io/v1alpha1"
    wmw = JsonApi(for_cluster(env.root.api, "root:edge"))
    schema = crd("reports.acme.io", "reports", "Report")["spec"]
    schema["versions"][0]["schema"] = schema["versions"][0]["schema"]["openAPIV3Schema"]
    wmw.create(
        f"{apis}/apiresourceschemas", {"metadata": {"name": "v1.reports.reports.acme.io"}, "spec": schema}
    )
    wmw.create(
        f"{apis}/apiexports",
        {"metadata": {"name": "reports"}, "spec": {"latestResourceSchemas": ["v1.reports.reports.acme.io"]}},
    )
    env.kcp.create(
        f"{apis}/apibindings",
        {
            "metadata": {"name": "reports"},
            "spec": {"reference": {"export": {"path": "root:edge", "name": "reports"}}},
        },
    )
    wait_for(
        lambda: env.kcp.exists("/apis/reports.acme.io/v1"), timeout=30, what="reports served in the mailbox"
    )
    env.pcluster.create(CRDS, crd("reports.acme.io", "reports", "Report"))
    wait_for(
        lambda: env.pcluster.exists("/apis/reports.acme.io/v1"), timeout=30, what="reports in the p-cluster"
    )
    env.namespace("audit", env.pcluster)
    env.config(
        "reports",
        {
            "upSyncedResources": [
                {"group": "reports.acme.io", "version": "v1", "kind": "Report", "namespace": "audit"}
            ]
        },
    )
    env.pcluster.create(
        "/apis/reports.acme.io/v1/namespaces/audit/reports",
        {
            "apiVersion": "reports.acme.io/v1",
            "kind": "Report",
            "metadata": {"name": "r1"},
            "summary": {"fail": 1},
        },
    )
    report = wait_object(env.kcp, "/apis/reports.acme.io/v1/namespaces/audit/reports/r1", "r1 upsynced", env)
    assert report["summary"] == {"fail": 1}
    env.pcluster.merge_patch("/apis/reports.acme.io/v1/namespaces/audit/reports/r1", {"summary": {"fail": 2}})
    wait_object(
        env.kcp,
        "/apis/reports.acme.io/v1/namespaces/audit/reports/r1",
        "r1's change upsynced",
        env,
        check=lambda o: o["summary"] == {"fail": 2},
    )
    # through the export's virtual workspace, from the workload-management workspace
    slice_ = wmw.get(f"{apis}/apiexportendpointslices/reports")
    url = slice_["status"]["endpoints"][0]["url"]
    everywhere = JsonApi(for_url(env.root.api, f"{url}/clusters/*"))
    listed = everywhere.get("/apis/reports.acme.io/v1/reports").get("items") or []
    assert [(r["metadata"]["name"], r["summary"]) for r in listed] == [("r1", {"fail": 2})]
    # gone downstream → gone upstream (after a successful poll)
    env.pcluster.delete("/apis/reports.acme.io/v1/namespaces/audit/reports/r1")
    wait_gone(
        env.kcp, "/apis/reports.acme.io/v1/namespaces/audit/reports/r1", "r1 to go from the mailbox", env
    )


def test_denatured_objects_are_renatured_downstream_and_their_state_returns(edge_env: EdgeEnv) -> None:
    env = edge_env
    # a CRD kept denatured in the mailbox (its natural group is bound there), and an object of it
    env.kcp.create(CRDS, crd("gadgets.acme.io.denatured", "gadgets", "Gadget"))
    wait_for(
        lambda: env.kcp.exists("/apis/gadgets.acme.io.denatured/v1"),
        timeout=30,
        what="denatured type served",
    )
    env.namespace("lab")
    env.kcp.create(
        "/apis/gadgets.acme.io.denatured/v1/namespaces/lab/gadgets",
        {
            "apiVersion": "gadgets.acme.io.denatured/v1",
            "kind": "Gadget",
            "metadata": {"name": "g1"},
            "spec": {"x": 1},
        },
    )
    env.config(
        "renature",
        {
            "downSyncedResources": [
                {
                    "group": "apiextensions.k8s.io",
                    "version": "v1",
                    "kind": "CustomResourceDefinition",
                    "name": "gadgets.gadgets.acme.io",
                },
                {
                    "group": "gadgets.acme.io",
                    "version": "v1",
                    "kind": "Gadget",
                    "namespace": "lab",
                    "name": "g1",
                },
            ],
            "conversions": [
                {
                    "upstream": {
                        "group": "apiextensions.k8s.io",
                        "version": "v1",
                        "kind": "CustomResourceDefinition",
                        "name": "gadgets.gadgets.acme.io.denatured",
                    },
                    "downstream": {
                        "group": "apiextensions.k8s.io",
                        "version": "v1",
                        "kind": "CustomResourceDefinition",
                        "name": "gadgets.gadgets.acme.io",
                    },
                },
                {
                    "upstream": {
                        "group": "gadgets.acme.io.denatured",
                        "version": "v1",
                        "kind": "Gadget",
                        "name": "g1",
                    },
                    "downstream": {
                        "group": "gadgets.acme.io",
                        "version": "v1",
                        "kind": "Gadget",
                        "name": "g1",
                    },
                },
            ],
        },
    )
    natural = wait_object(env.pcluster, f"{CRDS}/gadgets.gadgets.acme.io", "the renatured CRD", env)
    assert natural["spec"]["group"] == "gadgets.acme.io"
    gadget = wait_object(
        env.pcluster, "/apis/gadgets.acme.io/v1/namespaces/lab/gadgets/g1", "the renatured gadget", env
    )
    assert gadget["spec"] == {"x": 1} and gadget["apiVersion"] == "gadgets.acme.io/v1"
    env.pcluster.merge_patch(
        "/apis/gadgets.acme.io/v1/namespaces/lab/gadgets/g1/status", {"status": {"ok": True}}
    )
    wait_object(
        env.kcp,
        "/apis/gadgets.acme.io.denatured/v1/namespaces/lab/gadgets/g1",
        "the gadget's state back on its denatured form",
        env,
        check=lambda o: (o.get("status") or {}).get("ok") is True,
    )


def test_selectors_by_label_annotation_namespace_and_name(edge_env: EdgeEnv) -> None:
    env = edge_env
    for ns in ("sel-a", "sel-b"):
        env.namespace(ns)
    objects = {
        ("sel-a", "labelled"): {"labels": {"tier": "edge"}},
        ("sel-a", "annotated"): {"annotations": {"edge/ship": "yes"}},
        ("sel-a", "named"): {},
        ("sel-a", "plain"): {},
        ("sel-b", "elsewhere"): {"labels": {"tier": "edge"}},
    }
    for (ns, name), meta in objects.items():
        env.kcp.create(
            f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": name, **meta}, "data": {"n": name}}
        )
    env.config(
        "selectors",
        {
            "downSyncedResources": [
                {
                    "version": "v1",
                    "kind": "ConfigMap",
                    "namespace": "sel-a",
                    "labelSelector": {"matchLabels": {"tier": "edge"}},
                },
                {
                    "version": "v1",
                    "kind": "ConfigMap",
                    "annotationSelector": {"matchLabels": {"edge/ship": "yes"}},
                },
                {"version": "v1", "kind": "ConfigMap", "namespace": "sel-a", "name": "named"},
            ]
        },
    )
    for name in ("labelled", "annotated", "named"):
        wait_object(env.pcluster, f"/api/v1/namespaces/sel-a/configmaps/{name}", f"{name} downsynced", env)
    assert not env.pcluster.exists("/api/v1/namespaces/sel-a/configmaps/plain")
    assert not env.pcluster.exists("/api/v1/namespaces/sel-b/configmaps/elsewhere")


def conditions_of(env: EdgeEnv, name: str) -> dict[str, dict[str, Any]]:
    """The conditions of EdgeSyncConfig ``name`` by type."""
    status = env.kcp.get(f"{CONFIGS}/{name}").get("status") or {}
    return {c["type"]: c for c in status.get("conditions") or []}


def test_deletion_follows_the_configs_that_select_each_object(edge_env: EdgeEnv) -> None:
    """One config keeps what it selects (propagateDeletion: false); another config's objects are
    still deleted downstream."""
    env = edge_env
    env.namespace("merge")
    for name in ("kept", "dropped"):
        env.kcp.create("/api/v1/namespaces/merge/configmaps", {"metadata": {"name": name}})
    env.config(
        "keeper",
        {
            "downSyncedResources": [
                {"version": "v1", "kind": "ConfigMap", "namespace": "merge", "name": "kept"}
            ],
            "propagateDeletion": False,
        },
    )
    env.config(
        "apps",
        {
            "downSyncedResources": [
                {"version": "v1", "kind": "ConfigMap", "namespace": "merge", "name": "dropped"}
            ]
        },
    )
    kept = wait_object(
        env.pcluster,
        "/api/v1/namespaces/merge/configmaps/kept",
        "kept downsynced, marked as kept",
        env,
        check=lambda o: (o["metadata"].get("annotations") or {}).get("syncflow.kcp.io/keep") == "true",
    )
    dropped = wait_object(
        env.pcluster, "/api/v1/namespaces/merge/configmaps/dropped", "dropped downsynced", env
    )
    assert "syncflow.kcp.io/keep" not in (dropped["metadata"].get("annotations") or {})
    wait_for(  # the config's status is written by the leader's next tick, not with the copies
        lambda: conditions_of(env, "apps").get("Conflict", {}).get("status") == "False",
        timeout=30,
        what=lambda: f"Conflict=False on apps: {conditions_of(env, 'apps')}\n{env.agent.logs()}",
    )
    env.kcp.delete("/api/v1/namespaces/merge/configmaps/dropped")
    wait_gone(env.pcluster, "/api/v1/namespaces/merge/configmaps/dropped", "dropped deleted downstream", env)
    env.kcp.delete("/api/v1/namespaces/merge/configmaps/kept")
    wait_gone(env.kcp, "/api/v1/namespaces/merge/configmaps/kept", "kept to go from the mailbox", env)
    orphan = env.pcluster.get("/api/v1/namespaces/merge/configmaps/kept")
    assert orphan["metadata"]["uid"] == kept["metadata"]["uid"]
    assert orphan["metadata"]["annotations"]["syncflow.kcp.io/orphaned"] == "true"


def test_deselection_follows_the_configs_that_selected_each_object(edge_env: EdgeEnv) -> None:
    """A config narrowed so it no longer selects an object: its copy is deleted when that config
    propagated deletion, kept when it did not."""
    env = edge_env
    env.namespace("narrow")
    for name in ("kept", "dropped", "other"):
        env.kcp.create("/api/v1/namespaces/narrow/configmaps", {"metadata": {"name": name}})

    def selecting(*names: str) -> list[dict[str, str]]:
        return [{"version": "v1", "kind": "ConfigMap", "namespace": "narrow", "name": n} for n in names]

    env.config("narrow-keep", {"downSyncedResources": selecting("kept", "other"), "propagateDeletion": False})
    env.config("narrow-apps", {"downSyncedResources": selecting("dropped")})
    for name in ("kept", "dropped"):
        wait_object(env.pcluster, f"/api/v1/namespaces/narrow/configmaps/{name}", f"{name} downsynced", env)
    env.config("narrow-keep", {"downSyncedResources": selecting("other"), "propagateDeletion": False})
    env.config("narrow-apps", {"downSyncedResources": selecting("other")})
    wait_gone(env.pcluster, "/api/v1/namespaces/narrow/configmaps/dropped", "dropped deleted downstream", env)
    wait_for(
        lambda: (
            not any(
                f.startswith("edge.kcp.io/syncer-")
                for f in env.kcp.get("/api/v1/namespaces/narrow/configmaps/kept")["metadata"].get(
                    "finalizers"
                )
                or []
            )
        ),
        timeout=30,
        what=lambda: f"kept released in the mailbox\n{env.agent.logs()}",
    )
    assert env.pcluster.exists("/api/v1/namespaces/narrow/configmaps/kept")


def test_deletion_propagates_by_default(edge_env: EdgeEnv) -> None:
    env = edge_env
    env.namespace("gone")
    env.kcp.create("/api/v1/namespaces/gone/configmaps", {"metadata": {"name": "doomed"}})
    env.config("gone", {"downSyncedResources": [{"version": "v1", "kind": "ConfigMap", "namespace": "gone"}]})
    wait_object(env.pcluster, "/api/v1/namespaces/gone/configmaps/doomed", "doomed downsynced", env)
    env.kcp.delete("/api/v1/namespaces/gone/configmaps/doomed")
    wait_gone(env.pcluster, "/api/v1/namespaces/gone/configmaps/doomed", "doomed deleted downstream", env)
    wait_gone(env.kcp, "/api/v1/namespaces/gone/configmaps/doomed", "doomed gone upstream", env)


def test_unreachable_p_cluster_deletes_nothing_and_converges_after(edge_env: EdgeEnv) -> None:
    env = edge_env
    env.namespace("island")
    env.kcp.create("/api/v1/namespaces/island/configmaps", {"metadata": {"name": "kept"}, "data": {"v": "1"}})
    env.config(
        "island", {"downSyncedResources": [{"version": "v1", "kind": "ConfigMap", "namespace": "island"}]}
    )
    wait_object(env.pcluster, "/api/v1/namespaces/island/configmaps/kept", "kept downsynced", env)
    env.proxy.block()
    try:
        env.kcp.merge_patch("/api/v1/namespaces/island/configmaps/kept", {"data": {"v": "2"}})
        failed = wait_for(
            lambda: failures(env.redis, env.agent_name, "sync/down:configmaps/*/island/kept"),
            timeout=30,
            what=lambda: f"a sync that failed on the unreachable p-cluster\n{env.agent.logs()}",
        )
        assert [f["outcome"] for f in failed.values()] == ["transient"], failed
        assert env.kcp.exists("/api/v1/namespaces/island/configmaps/kept")
        assert env.pcluster.exists("/api/v1/namespaces/island/configmaps/kept")
    finally:
        env.proxy.unblock()
    wait_object(
        env.pcluster,
        "/api/v1/namespaces/island/configmaps/kept",
        "the change made meanwhile",
        env,
        check=lambda o: o["data"] == {"v": "2"},
        timeout=60,
    )


def test_reported_state_is_not_returned_for_the_objects_of_a_config_that_switches_it_off(
    edge_env: EdgeEnv,
) -> None:
    """Beside the bootstrap's empty default config and a config that returns reported state, a config
    with returnReportedState: false gets no status back for its objects."""
    env = edge_env
    env.kcp.create(CRDS, crd("probes.acme.io", "probes", "Probe"))
    wait_for(
        lambda: env.kcp.exists("/apis/probes.acme.io/v1"), timeout=30, what="probes served in the mailbox"
    )
    env.namespace("quiet")
    probes = "/apis/probes.acme.io/v1/namespaces/quiet/probes"
    for name in ("silent", "loud"):
        env.kcp.create(
            probes,
            {"apiVersion": "probes.acme.io/v1", "kind": "Probe", "metadata": {"name": name}, "spec": {}},
        )
    probe_crd = {
        "group": "apiextensions.k8s.io",
        "version": "v1",
        "kind": "CustomResourceDefinition",
        "name": "probes.probes.acme.io",
    }
    env.config("pc1", {})
    env.config(
        "quiet",
        {
            "downSyncedResources": [
                probe_crd,
                {
                    "group": "probes.acme.io",
                    "version": "v1",
                    "kind": "Probe",
                    "namespace": "quiet",
                    "name": "silent",
                },
            ],
            "returnReportedState": False,
        },
    )
    env.config(
        "loud",
        {
            "downSyncedResources": [
                {
                    "group": "probes.acme.io",
                    "version": "v1",
                    "kind": "Probe",
                    "namespace": "quiet",
                    "name": "loud",
                }
            ]
        },
    )
    for name in ("silent", "loud"):
        wait_object(env.pcluster, f"{probes}/{name}", f"{name} downsynced", env)
        env.pcluster.merge_patch(f"{probes}/{name}/status", {"status": {"seen": True}})
    wait_object(env.kcp, f"{probes}/loud", "loud's state in the mailbox", env, check=lambda o: "status" in o)
    # a later spec change still goes down, so the agent has processed silent since its status changed
    env.kcp.merge_patch(f"{probes}/silent", {"spec": {"v": 2}})
    wait_object(
        env.pcluster,
        f"{probes}/silent",
        "silent's change downsynced",
        env,
        check=lambda o: o["spec"] == {"v": 2},
    )
    assert "status" not in env.kcp.get(f"{probes}/silent")


def test_a_crd_upsync_selector_is_refused_and_nothing_is_upsynced_for_it(edge_env: EdgeEnv) -> None:
    env = edge_env
    env.pcluster.create(CRDS, crd("widgets.acme.io", "widgets", "Widget"))
    env.namespace("uplink", env.pcluster)
    env.namespace("uplink")
    env.pcluster.create("/api/v1/namespaces/uplink/configmaps", {"metadata": {"name": "report"}})
    env.config(
        "up-crd",
        {
            "upSyncedResources": [
                {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"},
                {"version": "v1", "kind": "ConfigMap", "namespace": "uplink", "name": "report"},
            ]
        },
    )
    refused = wait_for(
        lambda: (
            conditions_of(env, "up-crd").get("Refused", {}).get("status") == "True"
            and conditions_of(env, "up-crd")["Refused"]
        ),
        timeout=30,
        what=lambda: f"the Refused condition on up-crd\n{env.agent.logs()}",
    )
    assert refused["reason"] == "OutOfScope"
    assert "upSyncedResources[0]: CustomResourceDefinitions are never upsynced" in refused["message"]
    wait_for(
        lambda: conditions_of(env, "up-crd").get("Ready", {}).get("status") == "True",
        timeout=30,
        what=lambda: f"Ready=True on up-crd: {conditions_of(env, 'up-crd')}",
    )
    # the rest of the config applies: once its ConfigMap has come up, a CRD rule would have polled too
    wait_object(env.kcp, "/api/v1/namespaces/uplink/configmaps/report", "report upsynced", env)
    assert not env.kcp.exists(f"{CRDS}/widgets.acme.io")
    rules = RuleRegistry(env.redis, env.agent_name).entries()
    assert rules["up:configmaps"].state == "ready"
    assert not [name for name in rules if name.startswith("up:customresourcedefinitions")], rules
