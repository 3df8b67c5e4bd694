"""A Kyverno-like application as manifests, for the edge demo: what KubeStellar 0.14's Kyverno example
deploys from a mailbox workspace (the Helm chart's objects, trimmed to the ones that show each kind), its
EdgeSyncConfig, and the policy-report type that comes back up.

The mailbox serves ``wgpolicyk8s.io`` PolicyReports through an APIBinding (reports go up there), so it
keeps the PolicyReport CRD *denatured* — as ``policyreports.wgpolicyk8s.io.denatured`` — and the
EdgeSyncConfig's conversion renatures it into the real CRD in the p-cluster.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
NAMESPACE = "kyverno"
REPORT_GROUP = "wgpolicyk8s.io"
REPORT_VERSION = "v1alpha2"
DENATURED = f"{REPORT_GROUP}.denatured"
POLICY = "sample-policy"
REPORT = f"pol-{POLICY}"
EXPORT = "kyverno-reports"
RBAC = "rbac.authorization.k8s.io"


def _crd(group: str, plural: str, kind: str, version: str = "v1", scope: str = "Namespaced") -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": version,
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


def report_crd(group: str = REPORT_GROUP) -> Obj:
    """The PolicyReport CRD (``group``: the natural one, or the denatured one the mailbox keeps)."""
    return _crd(group, "policyreports", "PolicyReport", REPORT_VERSION)


def report_schema() -> Obj:
    """The APIResourceSchema the workload-management workspace exports PolicyReports with."""
    spec = report_crd()["spec"]
    version = spec["versions"][0]
    return {
        "apiVersion": "apis.kcp.io/v1alpha1",
        "kind": "APIResourceSchema",
        "metadata": {"name": f"v1.policyreports.{REPORT_GROUP}"},
        "spec": {
            "group": spec["group"],
            "names": spec["names"],
            "scope": spec["scope"],
            "versions": [{**version, "schema": version["schema"]["openAPIV3Schema"]}],
        },
    }


def application() -> list[Obj]:
    """The application's objects in the mailbox, in the order a user would apply them."""
    labels = {"app.kubernetes.io/name": "kyverno"}
    meta = {"namespace": NAMESPACE, "labels": labels}
    container = {
        "name": "kyverno",
        "image": "ghcr.io/kyverno/kyverno:v1.10.0",
        "args": ["--autogenInternals=true"],
        "ports": [{"name": "https", "containerPort": 9443}, {"name": "metrics", "containerPort": 8000}],
    }
    return [
        _crd("kyverno.io", "policies", "Policy"),
        _crd("kyverno.io", "clusterpolicies", "ClusterPolicy", scope="Cluster"),
        report_crd(DENATURED),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": labels}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "kyverno", **meta}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kyverno", **meta},
            "data": {"resourceFilters": "[Event,*,*][*,kube-system,*][*,kyverno,*]", "webhooks": "[]"},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kyverno-metrics", **meta},
            "data": {"namespaces": '{"include": [], "exclude": []}'},
        },
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "kyverno", "labels": labels},
            "rules": [
                {"apiGroups": ["kyverno.io"], "resources": ["*"], "verbs": ["*"]},
                {"apiGroups": [REPORT_GROUP], "resources": ["*"], "verbs": ["*"]},
                {
                    "apiGroups": [""],
                    "resources": ["configmaps", "namespaces"],
                    "verbs": ["get", "list", "watch"],
                },
            ],
        },
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "kyverno", "labels": labels},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "kyverno"},
            "subjects": [{"kind": "ServiceAccount", "name": "kyverno", "namespace": NAMESPACE}],
        },
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "Role",
            "metadata": {"name": "kyverno-leaderelection", **meta},
            "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]}],
        },
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "kyverno-leaderelection", **meta},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "kyverno-leaderelection"},
            "subjects": [{"kind": "ServiceAccount", "name": "kyverno", "namespace": NAMESPACE}],
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kyverno-svc", **meta},
            "spec": {"selector": labels, "ports": [{"name": "https", "port": 443, "targetPort": "https"}]},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kyverno-svc-metrics", **meta},
            "spec": {"selector": labels, "ports": [{"name": "metrics", "port": 8000, "targetPort": 8000}]},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "kyverno", **meta},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"serviceAccountName": "kyverno", "containers": [container]},
                },
            },
        },
    ]


def policy() -> Obj:
    """The sample policy (in ``default``), created once its CRD is served."""
    return {
        "apiVersion": "kyverno.io/v1",
        "kind": "Policy",
        "metadata": {"name": POLICY, "namespace": "default"},
        "spec": {
            "validationFailureAction": "Audit",
            "rules": [
                {
                    "name": "require-team-label",
                    "match": {"any": [{"resources": {"kinds": ["ConfigMap"]}}]},
                    "validate": {
                        "message": "label 'team' is required",
                        "pattern": {"metadata": {"labels": {"team": "?*"}}},
                    },
                }
            ],
        },
    }


def report() -> Obj:
    """The report Kyverno would write in the p-cluster about the sample policy."""
    return {
        "apiVersion": f"{REPORT_GROUP}/{REPORT_VERSION}",
        "kind": "PolicyReport",
        "metadata": {"name": REPORT, "namespace": "default"},
        "summary": {"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 0},
        "results": [
            {
                "policy": f"default/{POLICY}",
                "rule": "require-team-label",
                "result": "fail",
                "message": "label 'team' is required",
            }
        ],
    }


def _selector(obj: Obj) -> Obj:
    api_version = obj["apiVersion"]
    group, _, version = api_version.rpartition("/")
    selector: Obj = {"group": group, "version": version, "kind": obj["kind"], "name": obj["metadata"]["name"]}
    if obj["metadata"].get("namespace"):
        selector["namespace"] = obj["metadata"]["namespace"]
    if not group:
        del selector["group"]
    return selector


def edge_sync_config(name: str) -> Obj:
    """The EdgeSyncConfig: the application and policy down (the report CRD renatured), reports up."""
    down = [_selector(o) for o in application()]
    natural = report_crd()["metadata"]["name"]
    down = [s if s["name"] != f"policyreports.{DENATURED}" else {**s, "name": natural} for s in down]
    down.append(_selector(policy()))
    crd = {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"}
    return {
        "apiVersion": "edge.kcp.io/v1alpha1",
        "kind": "EdgeSyncConfig",
        "metadata": {"name": name},
        "spec": {
            "downSyncedResources": down,
            "upSyncedResources": [
                {
                    "group": REPORT_GROUP,
                    "version": REPORT_VERSION,
                    "kind": "PolicyReport",
                    "namespace": "default",
                    "name": REPORT,
                }
            ],
            "conversions": [
                {
                    "upstream": {**crd, "name": f"policyreports.{DENATURED}"},
                    "downstream": {**crd, "name": natural},
                }
            ],
        },
    }
