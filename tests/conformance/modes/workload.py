"""Workload mode in the suite: the case's config is a SyncTarget of its own, served by an agent of its
own, that syncs ConfigMaps (and nothing else) of workspace ``root:org:ws`` into the mapped ``kcp-<hash>``
namespaces of the physical cluster. The control SyncTarget's agent syncs only Secrets."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.modes.workload import target
from syncflow.modes.workload.rules import Workspace
from syncflow.sync.placement import locate
from syncflow.sync.rule import NamespaceMapping, Resource
from tests.conformance.harness import CONFIGMAPS, DEADLINE, SECRETS, SETUP, ModeHarness, Obj, read
from tests.support.waiting import wait_for
from tests.support.workload_env import SYNC_TARGETS, WorkloadEnv, WorkloadStack, workload_stack

CASE_TYPE = "v1/configmaps"


def _start(env: WorkloadEnv, resource: Resource) -> Workspace:
    """Start an agent, wait until its SyncTarget is Ready and syncs ``resource``; its identity."""
    env.start()
    env.wait_ready()
    wait_for(
        lambda: (env.synced(resource.plural, resource.group) or {}).get("state") == "Accepted",
        timeout=SETUP,
        what=lambda: f"{resource.plural} Accepted on SyncTarget {env.name}\n{env.agent.logs()}",
    )
    cluster, path = cluster_identity(env.kcp)
    return Workspace(cluster, path, env.name, env.sync_target()["metadata"]["uid"])


def _placed(workspace: Workspace, namespace: str, name: str) -> tuple[str, str]:
    """Where the agent of ``workspace``'s SyncTarget puts the copy of ``namespace/name``."""
    mapping = NamespaceMapping(locator=workspace.locator())
    obj = {"metadata": {"namespace": namespace, "name": name}}
    where = locate(mapping, obj, workspace.cluster, workspace.path, target_namespaced=True)
    return where.namespace, where.name


class WorkloadHarness(ModeHarness):
    """A workload-mode stack (``tests.support.workload_env``)."""

    mode = "workload"
    same_namespace_skip = (
        "workload mode maps every source namespace to kcp-<hash> (kcp's namespace locator): "
        "no source places a copy in kube-system"
    )
    narrow_deletes_copies = True
    """A type the SyncTarget stops supporting is a rule gone: its copies are deleted from the physical
    cluster, as kcp's syncer does with what is no longer scheduled to it (docs/ownership.md)."""
    delete_deletes_copies = True
    """The same for a deleted SyncTarget: every rule of it is gone."""

    def __init__(self, stack: WorkloadStack, control: Workspace) -> None:
        super().__init__()
        self.stack = stack
        self.control = control
        self.env: WorkloadEnv | None = None
        self.workspace: Workspace | None = None

    @property
    def source_api(self) -> JsonApi:
        return self.stack.kcp

    @property
    def target_api(self) -> JsonApi:
        return self.stack.physical

    @property
    def agent_name(self) -> str:
        return self._env().agent_name

    @property
    def redis(self) -> Redis:
        return self.stack.redis

    @property
    def source_cluster(self) -> str:
        return self.control.cluster

    @property
    def rule(self) -> str:
        return CONFIGMAPS.group_resource

    @property
    def finalizer(self) -> str:
        return target.finalizer(self.control.cluster, self._env().name)

    def logs(self) -> str:
        agents = [self.stack.agents[0], *([self.env] if self.env else [])]
        return "\n".join(agent.agent.logs() for agent in agents)

    def _env(self) -> WorkloadEnv:
        assert self.env is not None, "select() first: the case's SyncTarget is its config"
        return self.env

    def select(self, namespace: str, *, same_namespace: bool = False) -> None:
        if same_namespace:
            pytest.skip(self.same_namespace_skip)
        self.env = self.stack.agent(
            f"cf-{self.case}", [CASE_TYPE], settings={"SYNCFLOW_WORKLOAD_RESOURCES": json.dumps([])}
        )
        self.workspace = _start(self.env, CONFIGMAPS)

    def _sync_target(self) -> str:
        return f"{SYNC_TARGETS}/{self._env().name}"

    def narrow(self) -> None:
        self.stack.kcp.merge_patch(self._sync_target(), {"spec": {"supportedAPIExports": []}})

    def delete_config(self) -> None:
        self.stack.kcp.delete(self._sync_target())

    def delete_owner(self) -> None:
        self.delete_config()

    def config_conditions(self) -> list[Obj]:
        found = read(self.stack.kcp, self._sync_target()) or {}
        return list((found.get("status") or {}).get("conditions") or [])

    def target_location(self, namespace: str, name: str) -> tuple[str, str]:
        assert self.workspace is not None, "select() first: the mapped namespace names the SyncTarget"
        return _placed(self.workspace, namespace, name)

    def barrier(self, namespace: str) -> None:
        name = self.barrier_name()
        self.stack.kcp.create(
            SECRETS.path(namespace), {"metadata": {"name": name}, "stringData": {"barrier": "yes"}}
        )
        where = _placed(self.control, namespace, name)
        wait_for(
            lambda: self.stack.physical.exists(SECRETS.path(*where)),
            timeout=DEADLINE,
            what=f"the control agent's copy of Secret {namespace}/{name}",
        )

    def end(self) -> None:
        if self.env is not None:
            self.env.forget()
            with contextlib.suppress(Exception):
                self.delete_config()
        self.env = None
        self.workspace = None


@contextlib.contextmanager
def workload_harness(work: Path) -> Iterator[WorkloadHarness]:
    """A workload stack whose control SyncTarget's agent syncs Secrets only."""
    with workload_stack(work) as stack:
        secrets_only = {"SYNCFLOW_WORKLOAD_RESOURCES": json.dumps(["v1/secrets"])}
        control = stack.agent("control", [], settings=secrets_only)
        yield WorkloadHarness(stack, _start(control, SECRETS))
