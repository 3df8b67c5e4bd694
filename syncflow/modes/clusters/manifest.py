"""``syncflow clusters manifest <cluster>``: what to install in a cluster so that a syncflow syncer
there syncs it with kcp (pull mode), instead of the central syncflow's workers (push mode).

The installation is the bootstraps' (``syncflow.bootstrap.manifest``): a namespace with the syncer's
ServiceAccount, a Secret with the kcp kubeconfig given, a Redis, and ``syncflow clusters --only-cluster
<cluster>`` running all roles. The ServiceAccount may manage the synced types and namespaces cluster-wide,
and its Lease and state Secrets in its namespace. The syncer uses the same agent name as the central
syncflow, so the copies it finds are its own whichever syncer made them.
"""

from __future__ import annotations

import json
from typing import Any

from syncflow.bootstrap import manifest
from syncflow.bootstrap.manifest import Installation
from syncflow.modes.clusters.identity import SyncedType

Obj = dict[str, Any]
NAMESPACE = "syncflow-syncer"
EVERYTHING = ["get", "list", "watch", "create", "update", "patch", "delete"]


def syncer_manifest(
    cluster: str,
    *,
    kcp_kubeconfig: str,
    workspace: str,
    agent: str,
    types: list[SyncedType],
    namespace: str = NAMESPACE,
    image: str = manifest.IMAGE,
) -> list[Obj]:
    """The objects to apply in ``cluster`` (the kcp kubeconfig goes into a Secret: keep the file safe)."""
    inst = Installation(f"syncflow-{cluster}"[:63].rstrip("-."), namespace, image)
    rules = [manifest.rule([t.group], [t.plural, f"{t.plural}/status"], EVERYTHING) for t in types]
    rules.append(manifest.rule([""], ["namespaces"], ["get", "list", "watch", "create"]))
    env = {
        "SYNCFLOW_AGENT_NAME": agent,
        "SYNCFLOW_WORKSPACE_CLUSTER": workspace,
        "SYNCFLOW_ONLY_CLUSTER": cluster,
        "SYNCFLOW_KCP_KUBECONFIG": manifest.KCP_KUBECONFIG,
        "SYNCFLOW_CLUSTER_RESOURCES": json.dumps([t.group_resource for t in types]),
    }
    args = ["clusters", "--role", "all", "--data-dir", manifest.DATA_DIRECTORY]
    return [
        manifest.namespace(inst),
        manifest.service_account(inst),
        *manifest.cluster_access(inst, rules),
        *manifest.namespace_access(inst, manifest.own_namespace_rules()),
        manifest.kubeconfig_secret(inst, kcp_kubeconfig),
        *manifest.redis(inst),
        manifest.syncer(inst, "all", args, env),
    ]
