"""``syncflow clusters manifest <cluster>``: what to install in a cluster so that a syncflow syncer
there syncs it with kcp (pull mode), instead of the central syncflow's workers (push mode).

The syncer is ``syncflow clusters --only-cluster <cluster>`` with a Redis sidecar: it reaches its own
cluster in-cluster (a ServiceAccount allowed to manage the synced types, namespaces, its state
Secrets and its Lease) and kcp with the kubeconfig given here, stored in a Secret. It uses the same
agent name as the central syncflow, so the copies it finds are its own whichever syncer made them.
"""

from __future__ import annotations

import json
from typing import Any

from syncflow import __version__
from syncflow.modes.clusters.identity import SyncedType

Obj = dict[str, Any]
NAME = "syncflow-syncer"
REDIS_IMAGE = "redis:7.4-alpine"
KCP_KUBECONFIG = "/etc/syncflow/kcp/kubeconfig"


def _meta(name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name, "labels": {"app.kubernetes.io/name": NAME}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _rbac(cluster: str, namespace: str, types: list[SyncedType]) -> list[Obj]:
    everything = ["get", "list", "watch", "create", "update", "patch", "delete"]
    cluster_rules = [
        {"apiGroups": [t.group], "resources": [t.plural, f"{t.plural}/status"], "verbs": everything}
        for t in types
    ]
    cluster_rules.append({"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "create"]})
    cluster_role = f"{NAME}-{cluster}"
    subject = [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME, namespace)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": _meta(cluster_role),
            "rules": cluster_rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(cluster_role),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role},
            "subjects": subject,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _meta(NAME, namespace),
            "rules": [
                {"apiGroups": [""], "resources": ["secrets"], "verbs": everything},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": everything},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _meta(NAME, namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME},
            "subjects": subject,
        },
    ]


def _deployment(
    cluster: str, namespace: str, workspace: str, agent: str, types: list[SyncedType], image: str
) -> Obj:
    env = {
        "SYNCFLOW_AGENT_NAME": agent,
        "SYNCFLOW_WORKSPACE_CLUSTER": workspace,
        "SYNCFLOW_ONLY_CLUSTER": cluster,
        "SYNCFLOW_KCP_KUBECONFIG": KCP_KUBECONFIG,
        "SYNCFLOW_NAMESPACE": namespace,
        "SYNCFLOW_CLUSTER_RESOURCES": json.dumps([t.group_resource for t in types]),
        "SYNCFLOW_REDIS_URL": "redis://127.0.0.1:6379/0",
    }
    restricted = {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }
    syncer = {
        "name": "syncer",
        "image": image,
        "args": ["clusters", "--role", "all", "--data-dir", "/var/lib/syncflow/agent"],
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "volumeMounts": [
            {"name": "kcp-kubeconfig", "mountPath": "/etc/syncflow/kcp", "readOnly": True},
            {"name": "state", "mountPath": "/var/lib/syncflow"},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
        "securityContext": restricted,
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
    }
    redis = {
        "name": "redis",
        "image": REDIS_IMAGE,
        "args": ["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"],
        "securityContext": {**restricted, "runAsUser": 999},
        "volumeMounts": [{"name": "redis", "mountPath": "/data"}],
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
    }
    labels = {"app.kubernetes.io/name": NAME, "syncflow.kcp.io/cluster": cluster}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(NAME, namespace),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": NAME,
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [syncer, redis],
                    "volumes": [
                        {"name": "kcp-kubeconfig", "secret": {"secretName": f"{NAME}-kcp-kubeconfig"}},
                        {"name": "state", "emptyDir": {}},
                        {"name": "tmp", "emptyDir": {}},
                        {"name": "redis", "emptyDir": {}},
                    ],
                },
            },
        },
    }


def syncer_manifest(
    cluster: str,
    *,
    kcp_kubeconfig: str,
    workspace: str,
    agent: str,
    types: list[SyncedType],
    namespace: str = NAME,
    image: str = f"syncflow:{__version__}",
) -> list[Obj]:
    """The objects to apply in ``cluster`` (the kcp kubeconfig goes into a Secret: keep the file safe)."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _meta(f"{NAME}-kcp-kubeconfig", namespace),
        "type": "Opaque",
        "stringData": {"kubeconfig": kcp_kubeconfig},
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(namespace)},
        *_rbac(cluster, namespace, types),
        secret,
        _deployment(cluster, namespace, workspace, agent, types, image),
    ]
