"""``syncflow edge bootstrap``: KubeStellar 0.14's ``kubectl kcp workload edge-sync`` for edge mode.

In the mailbox workspace: the EdgeSyncConfig CRD (when it is not served), an empty EdgeSyncConfig
``<name>``, the syncer's ServiceAccount ``syncer-<uuid>`` with a ClusterRole granting everything there
(all verbs and resources, ``access`` to ``/``) and the binding. The syncer id is recorded on the
EdgeSyncConfig, so running the bootstrap again keeps the same account. The manifest for the p-cluster:
namespace ``kcp-edge-<syncer id>``, the syncer's ServiceAccount with every right there (an edge syncer
creates whatever its configs name, RBAC included), the upstream kubeconfig Secret, a Redis, and one
all-in-one ``syncflow edge`` Deployment.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes.client import ApiClient

from syncflow.api import crdgen, edgesyncconfig
from syncflow.api.install import InstallError, install_crds
from syncflow.bootstrap import account, manifest
from syncflow.bootstrap.errors import BootstrapError, explained
from syncflow.bootstrap.kubeconfig import Server, kubeconfig
from syncflow.bootstrap.manifest import Installation, rule
from syncflow.bootstrap.workspace import Workspace, open_workspace
from syncflow.config import DNS1035_LABEL
from syncflow.kube.clients import for_cluster
from syncflow.modes.edge.rules import EDGE_SYNC_CONFIGS
from syncflow.sync.discovery import find_resource

Obj = dict[str, Any]
SYNCER_ANNOTATION = "edge.kcp.io/syncer-id"
CRD_TIMEOUT = 60.0
EVERYTHING = [rule(["*"], ["*"], ["*"]), {"nonResourceURLs": ["/"], "verbs": ["access"]}]
"""The rights of an edge syncer in its mailbox workspace (KubeStellar's)."""


@dataclass(frozen=True)
class EdgeBootstrap:
    """What ``syncflow edge bootstrap`` was asked for."""

    name: str
    workspace: str | None = None
    kcp_namespace: str = "default"
    namespace: str | None = None
    """The p-cluster's namespace (default: ``kcp-edge-<syncer id>``)."""
    image: str = manifest.IMAGE
    workers: int = 2


def ensure_crd(kcp: ApiClient, ws: Workspace, echo: Callable[[str], None]) -> None:
    """Install the EdgeSyncConfig CRD in the workspace unless it is served there."""
    api_type = edgesyncconfig.API_TYPE
    with explained("reading", "the API discovery", ws.api.host):
        if find_resource(ws.api, api_type.group, api_type.version, kind=api_type.kind) is not None:
            return
    try:
        install_crds(for_cluster(kcp, ws.path), [crdgen.crd(api_type)], timeout=CRD_TIMEOUT, echo=echo)
    except InstallError as exc:
        raise BootstrapError(str(exc)) from None


def ensure_config(ws: Workspace, name: str, echo: Callable[[str], None]) -> tuple[Obj, str]:
    """The EdgeSyncConfig ``name`` (created empty if missing) and the syncer id recorded on it."""
    with explained("reading", f"edgesyncconfig {name}", ws.api.host):
        existing = {o["metadata"]["name"]: o for o in ws.api.get(EDGE_SYNC_CONFIGS).get("items") or []}
    syncer = ((existing.get(name) or {}).get("metadata", {}).get("annotations") or {}).get(SYNCER_ANNOTATION)
    syncer = syncer or f"syncer-{uuid.uuid4()}"
    body = {
        "apiVersion": f"{edgesyncconfig.GROUP}/{edgesyncconfig.VERSION}",
        "kind": edgesyncconfig.KIND,
        "metadata": {"name": name, "annotations": {SYNCER_ANNOTATION: syncer}},
    }
    if name not in existing:
        body["spec"] = {}
    return account.apply(ws.api, EDGE_SYNC_CONFIGS, body, echo), syncer


def bootstrap(kcp: ApiClient, options: EdgeBootstrap, echo: Callable[[str], None]) -> list[Obj]:
    """Register the edge syncer ``options.name`` in its mailbox workspace; return the p-cluster's manifest."""
    if not re.match(DNS1035_LABEL, options.name):
        raise BootstrapError(
            f'"{options.name}" names the syncer (its agent name): it must be a DNS-1035 label '
            "(lower-case letters, digits and '-', starting with a letter, at most 63 characters)"
        )
    ws = open_workspace(kcp, options.workspace)
    ensure_crd(kcp, ws, echo)
    config, syncer = ensure_config(ws, options.name, echo)
    owner = {
        "apiVersion": config["apiVersion"],
        "kind": config["kind"],
        "name": options.name,
        "uid": config["metadata"]["uid"],
    }
    token = account.ensure(ws.api, account.Account(syncer, options.kcp_namespace, EVERYTHING, owner), echo)
    inst = Installation(syncer, options.namespace or f"kcp-edge-{syncer}", options.image)
    upstream = kubeconfig(Server.of_workspace(kcp, ws.path), token, options.kcp_namespace)
    return pcluster_manifest(options, inst, ws.path, upstream)


def pcluster_manifest(
    options: EdgeBootstrap, inst: Installation, workspace_path: str, kcp_kubeconfig: str
) -> list[Obj]:
    """The p-cluster's manifest of edge syncer ``options.name`` for mailbox ``workspace_path``."""
    args = [
        "edge",
        "--role",
        "all",
        "--workspace",
        workspace_path,
        "--kcp-kubeconfig",
        manifest.KCP_KUBECONFIG,
        "--workers",
        str(options.workers),
        "--data-dir",
        manifest.DATA_DIRECTORY,
    ]
    return [
        manifest.namespace(inst),
        manifest.service_account(inst),
        *manifest.cluster_access(inst, [rule(["*"], ["*"], ["*"])]),
        manifest.kubeconfig_secret(inst, kcp_kubeconfig),
        *manifest.redis(inst),
        manifest.syncer(inst, "all", args, {"SYNCFLOW_AGENT_NAME": options.name}),
    ]
