"""``syncflow workload sync``: kcp v0.11's ``kubectl kcp workload sync`` for syncflow's workload mode.

In the workspace: the SyncTarget (created, or found and its ``supportedAPIExports`` and labels
updated), the syncer's ServiceAccount ``kcp-syncer-<name>-<hash>`` with a ClusterRole granting what the
syncer does there (read its SyncTarget and write its status; read, finalize and write the status of
every type it syncs; read namespaces and CRDs; record Events) and the binding. The manifest for the
physical cluster: namespace ``kcp-syncer-<name>-<hash>``, the syncer's ServiceAccount and rights there
(every synced type, namespaces and CRDs cluster-wide; Lease, state Secrets and Events in its namespace),
the kcp kubeconfig Secret, a Redis, and Deployments of ``syncflow workload`` (watch, worker and beat, or
one all-in-one), all pinned to the SyncTarget's UID.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from syncflow.api.synctarget import SupportedAPIExport, SyncTarget, SyncTargetError
from syncflow.bootstrap import account, manifest
from syncflow.bootstrap.errors import BootstrapError, explained
from syncflow.bootstrap.kubeconfig import Server, kubeconfig
from syncflow.bootstrap.manifest import Installation, rule
from syncflow.bootstrap.workspace import Workspace, open_workspace
from syncflow.config import DNS1035_LABEL, Settings
from syncflow.modes.workload import discovery, target
from syncflow.sync.discovery import find_resource

Obj = dict[str, Any]
DEFAULT_RESOURCES = ("apps/v1/deployments", "v1/services")
"""The seed's examples: Deployments and Services (ConfigMaps and Secrets always sync)."""
UPSTREAM_VERBS = ["get", "list", "watch", "update", "patch"]


@dataclass(frozen=True)
class WorkloadSync:
    """What ``syncflow workload sync`` was asked for."""

    name: str
    workspace: str | None = None
    resources: tuple[str, ...] = DEFAULT_RESOURCES
    """``<group>/<version>/<plural>`` of root:compute's ``kubernetes`` export."""
    apiexports: tuple[str, ...] = ()
    """Whole APIExports, ``[<path>:]<export>``."""
    labels: dict[str, str] = field(default_factory=dict)
    kcp_namespace: str = "default"
    namespace: str | None = None
    """The physical cluster's namespace (default: the syncer id)."""
    image: str = manifest.IMAGE
    workers: int = 2
    all_in_one: bool = False


def supported_exports(options: WorkloadSync) -> list[Obj]:
    """``spec.supportedAPIExports`` for the options (``resource`` entries first, then whole exports)."""
    entries = [{"export": "kubernetes", "resource": r} for r in options.resources]
    for text in options.apiexports:
        path, _, export = text.rpartition(":")
        entries.append({"export": export, "path": path} if path else {"export": export})
    try:
        for entry in entries:
            SupportedAPIExport.model_validate(entry)
    except ValueError as exc:
        raise BootstrapError(f"--resources/--apiexports: {exc}") from None
    return entries


def ensure_sync_target(ws: Workspace, options: WorkloadSync, echo: Callable[[str], None]) -> SyncTarget:
    """The SyncTarget, created or updated to the options."""
    with explained("reading", "the API discovery", ws.api.host):
        served = find_resource(ws.api, "workload.kcp.io", "v1alpha1", plural="synctargets")
    if served is None:
        raise BootstrapError(
            f"workspace {ws.path} does not serve workload.kcp.io/v1alpha1 SyncTargets: is it kcp with TMC? "
            "(syncflow crds --apply installs syncflow's CRD of it)"
        )
    meta: Obj = {"name": options.name}
    if options.labels:
        meta["labels"] = dict(options.labels)
    body = {
        "apiVersion": "workload.kcp.io/v1alpha1",
        "kind": "SyncTarget",
        "metadata": meta,
        "spec": {"supportedAPIExports": supported_exports(options)},
    }
    found = account.apply(ws.api, target.SYNC_TARGETS, body, echo)
    try:
        return SyncTarget.parse(found)
    except SyncTargetError as exc:
        raise BootstrapError(f'SyncTarget "{options.name}" in {ws.path} is not valid: {exc}') from None


def kcp_rules(name: str, types: list[discovery.TypeRef]) -> list[Obj]:
    """What the syncer may do in its workspace.

    SyncTargets are readable as a whole: list and watch restricted by ``resourceNames`` need the API
    server to authorise by field selector, which not every kcp-compatible server does."""
    rules = [
        rule(["workload.kcp.io"], ["synctargets"], ["get", "list", "watch"]),
        # its own SyncTarget: the finalizer that keeps it until the syncer has released its objects
        rule(["workload.kcp.io"], ["synctargets"], ["update", "patch"], [name]),
        rule(["workload.kcp.io"], ["synctargets/status"], ["get", "update", "patch"], [name]),
        rule(["core.kcp.io"], ["logicalclusters"], ["get"], ["cluster"]),
        rule([""], ["namespaces"], ["get", "list", "watch"]),
        rule([""], ["events"], ["get", "create", "patch", "update"]),
        rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], UPSTREAM_VERBS),
        rule(["apis.kcp.io"], ["apiexports", "apiresourceschemas"], ["get"]),
    ]
    return rules + _type_rules(types, UPSTREAM_VERBS)


def _type_rules(types: list[discovery.TypeRef], verbs: list[str]) -> list[Obj]:
    by_group: dict[str, list[str]] = {}
    for ref in types:
        by_group.setdefault(ref.group, []).extend([ref.plural, f"{ref.plural}/status"])
    return [rule([group], sorted(set(plurals)), verbs) for group, plurals in sorted(by_group.items())]


def physical_rules(types: list[discovery.TypeRef]) -> list[Obj]:
    """What the syncer may do in the physical cluster, cluster-wide."""
    return [
        rule([""], ["namespaces"], ["get", "list", "watch", "create", "update", "patch", "delete"]),
        rule(
            ["apiextensions.k8s.io"],
            ["customresourcedefinitions"],
            ["get", "list", "watch", "create", "update", "patch", "delete"],
        ),
        *_type_rules(types, ["*"]),
    ]


def _syncer_id(sync_target: SyncTarget) -> str:
    name, uid = sync_target.metadata.name or "", sync_target.metadata.uid or ""
    syncer = target.syncer_id(name, uid)
    if not re.match(DNS1035_LABEL, syncer):
        raise BootstrapError(
            f'SyncTarget name "{name}" is too long: its syncer id {syncer} names a namespace and must be a '
            "DNS-1035 label (at most 63 characters); use a shorter name"
        )
    return syncer


def _deployments(inst: Installation, options: WorkloadSync, workspace_path: str, uid: str) -> list[Obj]:
    identity = [
        "--sync-target-name",
        options.name,
        "--sync-target-uid",
        uid,
        "--workspace-cluster",
        workspace_path,
        "--kcp-kubeconfig",
        manifest.KCP_KUBECONFIG,
    ]
    env = {"SYNCFLOW_AGENT_NAME": inst.name}
    workers = ["--workers", str(options.workers)]
    state = ["--data-dir", manifest.DATA_DIRECTORY]
    if options.all_in_one:
        return [manifest.syncer(inst, "all", ["workload", "--role", "all", *identity, *workers, *state], env)]
    return [
        manifest.syncer(inst, "watch", ["workload", "--role", "watch", *identity], env),
        manifest.syncer(inst, "worker", ["workload", "--role", "worker", *identity, *workers], env),
        manifest.syncer(inst, "beat", ["workload", "--role", "beat", *identity, *state], env),
    ]


def physical_manifest(
    options: WorkloadSync,
    inst: Installation,
    workspace_path: str,
    uid: str,
    types: list[discovery.TypeRef],
    kcp_kubeconfig: str,
) -> list[Obj]:
    """The physical cluster's manifest of a syncer of SyncTarget ``uid`` syncing ``types``."""
    return [
        manifest.namespace(inst),
        manifest.service_account(inst),
        *manifest.cluster_access(inst, physical_rules(types)),
        *manifest.namespace_access(inst, manifest.own_namespace_rules()),
        manifest.kubeconfig_secret(inst, kcp_kubeconfig),
        *manifest.redis(inst),
        *_deployments(inst, options, workspace_path, uid),
    ]


def sync(kcp: ApiClient, options: WorkloadSync, echo: Callable[[str], None]) -> list[Obj]:
    """Register the syncer of SyncTarget ``options.name`` in kcp; return the physical cluster's manifest."""
    ws = open_workspace(kcp, options.workspace)
    sync_target = ensure_sync_target(ws, options, echo)
    syncer = _syncer_id(sync_target)
    defaults = Settings.model_fields["workload_resources"].get_default(call_default_factory=True)
    with explained("reading the types of", f"synctarget {options.name}", ws.api.host):
        try:
            types = discovery.wanted_types(ws.api, ws.path, sync_target, defaults)
        except ApiException as exc:
            if exc.status != 404:
                raise
            raise BootstrapError(f"an APIExport of --apiexports was not found: {exc.reason}") from None
    owner = {
        "apiVersion": "workload.kcp.io/v1alpha1",
        "kind": "SyncTarget",
        "name": options.name,
        "uid": sync_target.metadata.uid,
    }
    holder = account.Account(syncer, options.kcp_namespace, kcp_rules(options.name, types), owner)
    token = account.ensure(ws.api, holder, echo)
    inst = Installation(syncer, options.namespace or syncer, options.image)
    config = kubeconfig(Server.of_workspace(kcp, ws.path), token, options.kcp_namespace)
    return physical_manifest(options, inst, ws.path, sync_target.metadata.uid or "", types, config)
