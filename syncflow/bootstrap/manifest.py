"""The objects of a syncer installation in its own cluster (a physical cluster, a p-cluster).

One namespace holds it: the syncer's ServiceAccount with its cluster-wide and namespaced rights, a
Secret with the kcp kubeconfig (mounted at ``/kcp/``), a Redis (Deployment + Service: the work queue;
it holds no durable truth) and the Deployments of syncflow's processes. The syncer reaches its own
cluster in-cluster, as its ServiceAccount.
"""

from __future__ import annotations

import base64
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syncflow import __version__
from syncflow.api.crdgen import to_yaml

Obj = dict[str, Any]
IMAGE = f"syncflow:{__version__}"
"""The image the Dockerfile builds (tagged with syncflow's version, as the chart's default)."""
REDIS_IMAGE = "redis:7.4-alpine"
"""The chart's Redis image."""
REDIS_NAME = "syncflow-redis"
REDIS_PORT = 6379
KUBECONFIG_KEY = "kubeconfig"
KCP_DIRECTORY = "/kcp/"
KCP_KUBECONFIG = KCP_DIRECTORY + KUBECONFIG_KEY
DATA_DIRECTORY = "/var/lib/syncflow/agent"
HEALTH_PORT = 8080
RBAC_VERSION = "rbac.authorization.k8s.io/v1"
_RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "capabilities": {"drop": ["ALL"]},
}


def rule(
    groups: Iterable[str], resources: Iterable[str], verbs: Iterable[str], names: Iterable[str] = ()
) -> Obj:
    """One RBAC policy rule."""
    found: Obj = {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}
    if names:
        found["resourceNames"] = list(names)
    return found


@dataclass(frozen=True)
class Installation:
    """Where a syncer lives in its cluster, under which name, from which image."""

    name: str
    """The syncer's id: names its ServiceAccount, roles, Secret and Deployments."""
    namespace: str
    image: str = IMAGE

    def labels(self, component: str | None = None) -> dict[str, str]:
        """The labels of every object (and ``component`` for one process)."""
        labels = {"app.kubernetes.io/name": "syncflow", "app.kubernetes.io/instance": self.name}
        if component:
            labels["app.kubernetes.io/component"] = component
        return labels

    def metadata(self, name: str, namespaced: bool = True, component: str | None = None) -> Obj:
        """Metadata of one object of the installation."""
        meta: Obj = {"name": name}
        if namespaced:
            meta["namespace"] = self.namespace
        meta["labels"] = self.labels(component)
        return meta

    @property
    def redis_url(self) -> str:
        """The URL of the installation's Redis, from inside its namespace."""
        return f"redis://{REDIS_NAME}:{REDIS_PORT}/0"


def namespace(inst: Installation) -> Obj:
    """The installation's namespace."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": inst.metadata(inst.namespace, namespaced=False),
    }


def service_account(inst: Installation) -> Obj:
    """The syncer's ServiceAccount."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": inst.metadata(inst.name)}


def _subjects(inst: Installation) -> list[Obj]:
    return [{"kind": "ServiceAccount", "name": inst.name, "namespace": inst.namespace}]


def cluster_access(inst: Installation, rules: list[Obj]) -> list[Obj]:
    """A ClusterRole with ``rules`` and its binding to the syncer's ServiceAccount."""
    return [
        {
            "apiVersion": RBAC_VERSION,
            "kind": "ClusterRole",
            "metadata": inst.metadata(inst.name, False),
            "rules": rules,
        },
        {
            "apiVersion": RBAC_VERSION,
            "kind": "ClusterRoleBinding",
            "metadata": inst.metadata(inst.name, False),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": inst.name},
            "subjects": _subjects(inst),
        },
    ]


def namespace_access(inst: Installation, rules: list[Obj]) -> list[Obj]:
    """A Role in the installation's namespace with ``rules`` and its binding to the ServiceAccount."""
    return [
        {"apiVersion": RBAC_VERSION, "kind": "Role", "metadata": inst.metadata(inst.name), "rules": rules},
        {
            "apiVersion": RBAC_VERSION,
            "kind": "RoleBinding",
            "metadata": inst.metadata(inst.name),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": inst.name},
            "subjects": _subjects(inst),
        },
    ]


def own_namespace_rules() -> list[Obj]:
    """What every syncer does in its own namespace: the leader Lease, last-applied state Secrets, Events."""
    everything = ["get", "list", "watch", "create", "update", "patch", "delete"]
    return [
        rule(["coordination.k8s.io"], ["leases"], everything),
        rule([""], ["secrets"], everything),
        rule([""], ["events"], ["create", "patch", "update"]),
    ]


def kubeconfig_secret(inst: Installation, kubeconfig: str) -> Obj:
    """The Secret holding the kcp kubeconfig (with the syncer's token)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": inst.metadata(inst.name),
        "type": "Opaque",
        # data, not stringData: kubectl apply would report every re-apply of stringData as a change
        "data": {KUBECONFIG_KEY: base64.b64encode(kubeconfig.encode()).decode()},
    }


def redis(inst: Installation) -> list[Obj]:
    """A single Redis without persistence, bounded in memory, reachable as ``syncflow-redis``."""
    labels = inst.labels("redis")
    container = {
        "name": "redis",
        "image": REDIS_IMAGE,
        "args": [
            "--save",
            "",
            "--appendonly",
            "no",
            "--maxmemory",
            "200mb",
            "--maxmemory-policy",
            "noeviction",
        ],
        "ports": [{"name": "redis", "containerPort": REDIS_PORT}],
        "securityContext": {**_RESTRICTED, "runAsUser": 999},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
        "readinessProbe": {"tcpSocket": {"port": "redis"}, "periodSeconds": 5},
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": inst.metadata(REDIS_NAME, component="redis"),
        "spec": {
            "replicas": 1,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "automountServiceAccountToken": False,
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [container],
                    "volumes": [{"name": "data", "emptyDir": {}}],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": inst.metadata(REDIS_NAME, component="redis"),
        "spec": {"selector": labels, "ports": [{"name": "redis", "port": REDIS_PORT, "targetPort": "redis"}]},
    }
    return [deployment, service]


def syncer(
    inst: Installation, component: str, args: list[str], env: dict[str, str], replicas: int = 1
) -> Obj:
    """A Deployment running ``syncflow <args>`` as the syncer's ServiceAccount, the kcp kubeconfig at
    ``/kcp/``; ``SYNCFLOW_NAMESPACE`` is its own namespace and ``SYNCFLOW_REDIS_URL`` the installation's
    Redis. A ``watch`` or ``all`` process serves ``/healthz`` for a liveness probe."""
    labels = inst.labels(component)
    variables = [
        {"name": "SYNCFLOW_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "SYNCFLOW_REDIS_URL", "value": inst.redis_url},
        *({"name": key, "value": value} for key, value in env.items()),
    ]
    container: Obj = {
        "name": "syncflow",
        "image": inst.image,
        "imagePullPolicy": "IfNotPresent",
        "args": args,
        "env": variables,
        "volumeMounts": [
            {"name": "kcp-config", "mountPath": KCP_DIRECTORY, "readOnly": True},
            {"name": "state", "mountPath": "/var/lib/syncflow"},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
        "securityContext": _RESTRICTED,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
    }
    if component == "watch":
        container["args"] = [*args, "--health-address", f"0.0.0.0:{HEALTH_PORT}"]
        container["livenessProbe"] = {
            "httpGet": {"path": "/healthz", "port": HEALTH_PORT},
            "initialDelaySeconds": 20,
            "periodSeconds": 10,
        }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": inst.metadata(f"{inst.name}-{component}", component=component),
        "spec": {
            "replicas": replicas,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": inst.name,
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    # above the task time limit: running tasks finish on SIGTERM
                    "terminationGracePeriodSeconds": 90,
                    "containers": [container],
                    "volumes": [
                        {"name": "kcp-config", "secret": {"secretName": inst.name}},
                        {"name": "state", "emptyDir": {}},
                        {"name": "tmp", "emptyDir": {}},
                    ],
                },
            },
        },
    }


def write(objects: list[Obj], output: str) -> None:
    """Write the manifest as YAML to ``output`` (``-``: stdout); a file is readable by its owner only,
    as it holds a token."""
    text = to_yaml(objects)
    if output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    path = Path(output)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(text)
    path.chmod(0o600)
