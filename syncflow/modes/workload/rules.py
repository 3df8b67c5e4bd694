"""Workload mode's front-end to the engine: every Accepted type of the SyncTarget as a sync rule.

A type's rule syncs every object of it in the workspace to the physical cluster: namespaced objects
into the mapped namespace ``kcp-<hash>`` (TMC's namespace locator), with kcp's metadata removed, the
``syncer.kcp.io/*`` annotations added, Service IPs and node ports left to the physical cluster and
service-account token Secrets left out; status comes back. Edits on the physical side of fields kcp
sets are reverted, as kcp's syncer re-applies the upstream spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from syncflow.api.synctarget import SyncTarget
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.workload import discovery, target
from syncflow.sync import owners
from syncflow.sync.reconciler import get_or_none
from syncflow.sync.registry import RuleEntry
from syncflow.sync.rule import (
    Annotate,
    DropAnnotations,
    NamespaceMapping,
    Selector,
    Side,
    SyncRule,
    Transform,
)
from syncflow.sync.transforms import ALLOCATED_BY_CLUSTER

Obj = dict[str, Any]

NO_TOKEN_SECRETS = Selector(fields="type!=kubernetes.io/service-account-token")


@dataclass(frozen=True)
class Workspace:
    """The SyncTarget's workspace: its logical cluster name and path, and the SyncTarget's name and UID."""

    cluster: str
    path: str
    sync_target: str
    uid: str

    def previous_finalizers(self) -> tuple[str, ...]:
        """The finalizer of syncflow versions that hashed the workspace path instead of kcp's logical
        cluster name: replaced on the next sync of each object."""
        if self.path == self.cluster:
            return ()
        return (target.finalizer(self.path, self.sync_target),)

    def locator(self) -> dict[str, Any]:
        """The fixed part of every namespace locator (kcp's ``SyncTargetLocator``)."""
        return {"syncTarget": {"cluster": self.cluster, "name": self.sync_target, "uid": self.uid}}


def build_rule(
    check: discovery.TypeCheck, workspace: Workspace, agent: str, state_namespace: str
) -> SyncRule:
    """The rule of one accepted type."""
    assert check.upstream is not None and check.downstream is not None
    ref = check.ref
    transforms: list[Transform] = [
        DropAnnotations(prefixes=("kcp.io/", "experimental.status.workload.kcp.io/")),
        Annotate(
            annotations={
                target.SYNC_TARGET_ANNOTATION: workspace.sync_target,
                target.WORKSPACE_ANNOTATION: workspace.path,
            },
            timestamp=target.LAST_SYNC_ANNOTATION,
        ),
    ]
    allocated = ALLOCATED_BY_CLUSTER.get(ref.group_resource)
    if allocated is not None:
        transforms.append(allocated)
    is_crd = (ref.group, ref.version, ref.plural) == discovery.CRD_TYPE
    return SyncRule(
        name=ref.group_resource,
        agent=agent,
        source=Side(endpoint=target.KCP, resource=check.upstream, cluster=workspace.cluster),
        target=Side(endpoint=target.CLUSTER, resource=check.downstream),
        selector=NO_TOKEN_SECRETS if (ref.group, ref.plural) == ("", "secrets") else Selector(),
        placement=NamespaceMapping(locator=workspace.locator()),
        transforms=tuple(transforms),
        status="none" if is_crd else "return",
        adopt="never" if is_crd else "refuse",
        finalizer=target.finalizer(workspace.cluster, workspace.sync_target),
        previous_finalizers=workspace.previous_finalizers(),
        release="delete",
        state_namespace=state_namespace,
        drift="revert",
    )


@dataclass
class WorkloadRules:
    """The rules of the SyncTarget's Accepted types (watch side), rebuilt when the SyncTarget changes."""

    kcp: JsonApi
    physical: JsonApi
    workspace: Workspace
    agent: str
    state_namespace: str
    _cache: tuple[str, dict[str, RuleEntry]] | None = field(default=None)

    def desired(self) -> Mapping[str, RuleEntry]:
        """One entry per type in the SyncTarget's ``status.syncedResources``; none once the SyncTarget
        is deleted or being deleted (its rules are released)."""
        obj = get_or_none(self.kcp, f"{target.SYNC_TARGETS}/{self.workspace.sync_target}")
        if obj is None or owners.deleting(obj):
            self._cache = None
            return {}
        version = obj["metadata"].get("resourceVersion", "")
        if self._cache is None or self._cache[0] != version:
            self._cache = (version, self._entries(SyncTarget.parse(obj)))
        return self._cache[1]

    def _entries(self, sync_target: SyncTarget) -> dict[str, RuleEntry]:
        entries: dict[str, RuleEntry] = {}
        for synced in (sync_target.status.synced_resources if sync_target.status else None) or []:
            ref = discovery.TypeRef(synced.group, (synced.versions or ["v1"])[0], synced.resource)
            if synced.state != "Accepted":
                entries[ref.group_resource] = RuleEntry.pending(synced.message or synced.state)
                continue
            check = discovery.check(self.kcp, self.physical, ref)
            if check.state != "Accepted":
                entries[ref.group_resource] = RuleEntry.pending(check.message)
                continue
            rule = build_rule(check, self.workspace, self.agent, self.state_namespace)
            entries[ref.group_resource] = RuleEntry.ready(rule)
        return entries
