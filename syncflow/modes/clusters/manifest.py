"""``syncflow clusters manifest <cluster>``: what to install in a cluster so that a syncflow syncer
there syncs it with kcp (pull mode), instead of the central syncflow's workers (push mode).

In the workspace: the pull syncer's own ServiceAccount ``syncflow-pull-<cluster>`` (the bootstraps'
``syncflow.bootstrap.account``), owned by the Cluster, with a ClusterRole granting only what the syncer
does there: read its own Cluster and write its heartbeat, read the synced types, hold its finalizer
on them and return their status, record Events. The installation is the bootstraps'
(``syncflow.bootstrap.manifest``): a namespace with the syncer's ServiceAccount, a Secret with a kcp
kubeconfig holding that account's token (never the caller's credentials), a Redis, and ``syncflow
clusters --only-cluster <cluster>`` running all roles. The ServiceAccount may manage the synced types
and namespaces cluster-wide, and its Lease and state Secrets in its namespace. The syncer uses the
same agent name as the central syncflow, so the copies it finds are its own whichever syncer made them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kubernetes.client import ApiClient

from syncflow.api.cluster import GROUP, PLURAL
from syncflow.bootstrap import account, manifest
from syncflow.bootstrap.kubeconfig import Server, kubeconfig
from syncflow.bootstrap.manifest import Installation, rule
from syncflow.kube.clients import for_cluster
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.clusters.identity import SyncedType, pull_account

Obj = dict[str, Any]
NAMESPACE = "syncflow-syncer"
KCP_NAMESPACE = "default"
"""The workspace namespace of the pull syncers' ServiceAccounts."""
EVERYTHING = ["get", "list", "watch", "create", "update", "patch", "delete"]


def kcp_rules(cluster: str, types: list[SyncedType]) -> list[Obj]:
    """What the pull syncer of ``cluster`` may do in its workspace, and nothing more.

    Its own Cluster only (a list or watch selects it by name): the others hold other clusters'
    kubeconfigs."""
    rules = [
        rule([GROUP], [PLURAL], ["get", "list", "watch"], [cluster]),
        rule([GROUP], [f"{PLURAL}/status"], ["patch"], [cluster]),
        rule(["core.kcp.io"], ["logicalclusters"], ["get"], ["cluster"]),
        rule([""], ["events"], ["get", "create", "patch"]),
    ]
    for t in types:
        rules.append(rule([t.group], [t.plural], ["get", "list", "watch", "patch"]))
        rules.append(rule([t.group], [f"{t.plural}/status"], ["get", "update", "patch"]))
    return rules


def pull_kubeconfig(
    kcp: ApiClient, workspace: str, cluster: Obj, types: list[SyncedType], echo: Callable[[str], None]
) -> str:
    """Create or update the pull syncer's account of Cluster ``cluster`` in ``workspace`` (owned by the
    Cluster, so deleting it removes the account); return a kubeconfig of the workspace as that account:
    the server and CA of ``kcp``, none of its credentials."""
    meta = cluster["metadata"]
    owner = {
        "apiVersion": cluster["apiVersion"],
        "kind": cluster["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
    }
    holder = account.Account(pull_account(meta["name"]), KCP_NAMESPACE, kcp_rules(meta["name"], types), owner)
    token = account.ensure(JsonApi(for_cluster(kcp, workspace)), holder, echo)
    return kubeconfig(Server.of_workspace(kcp, workspace), token, KCP_NAMESPACE)


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
    """The objects to apply in ``cluster`` (``kcp_kubeconfig``, the pull syncer's own, goes into a
    Secret: keep the file safe)."""
    inst = Installation(f"syncflow-{cluster}"[:63].rstrip("-."), namespace, image)
    rules = [rule([t.group], [t.plural, f"{t.plural}/status"], EVERYTHING) for t in types]
    rules.append(rule([""], ["namespaces"], ["get", "list", "watch", "create"]))
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
