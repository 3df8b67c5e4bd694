"""Edge mode in the suite: the case's config is an EdgeSyncConfig of its own selecting the ConfigMaps of
the case's namespace in the mailbox workspace; copies land in the p-cluster under the same namespace and
name. The control config selects labelled Secrets (``CONTROL_SPEC``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from redis import Redis

from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.queue.keys import ObjectKey
from tests.conformance.harness import (
    CONFIGMAPS,
    DEADLINE,
    NEVER_LABEL,
    SECRETS,
    SETUP,
    ModeHarness,
    Obj,
    condition,
    ensure_namespace,
    read,
)
from tests.support.edge_env import CONFIGS, EdgeEnv, edge_environment
from tests.support.waiting import wait_for

CONTROL = "cf-control"
"""The control config."""
BARRIER_LABEL = "conformance.syncflow.dev/barrier"
NAMESPACES_RULE = "down:namespaces"
CONTROL_SPEC = {
    "downSyncedResources": [
        {"version": "v1", "kind": "Secret", "labelSelector": {"matchLabels": {BARRIER_LABEL: "true"}}}
    ]
}
"""The control config: the Secrets labelled ``BARRIER_LABEL``, in any namespace (another type than the
case's, so that deleting the case's config leaves no rule for ConfigMaps)."""


def configmaps_in(namespace: str, **selector: Any) -> dict[str, Any]:
    """An EdgeSyncConfig spec downsyncing the ConfigMaps of ``namespace`` (narrowed by ``selector``)."""
    selected = {"version": "v1", "kind": "ConfigMap", "namespace": namespace, **selector}
    return {"downSyncedResources": [selected]}


class EdgeHarness(ModeHarness):
    """An edge-mode stack (``tests.support.edge_env``)."""

    mode = "edge"
    narrow_deletes_copies = True
    """docs/edge.md, Downsync: an object that stops being selected is deleted downstream when deletion
    propagates (propagateDeletion, true by default)."""
    delete_deletes_copies = True
    """The same for the objects of a deleted config: no config selects them any more."""

    def __init__(self, env: EdgeEnv) -> None:
        super().__init__()
        self.env = env
        self.cluster, _ = cluster_identity(env.kcp)
        self.config = ""

    @property
    def source_api(self) -> JsonApi:
        return self.env.kcp

    @property
    def target_api(self) -> JsonApi:
        return self.env.pcluster

    @property
    def agent_name(self) -> str:
        return self.env.agent_name

    @property
    def redis(self) -> Redis:
        return self.env.redis

    @property
    def source_cluster(self) -> str:
        return self.cluster

    @property
    def rule(self) -> str:
        return f"down:{CONFIGMAPS.group_resource}"

    @property
    def finalizer(self) -> str:
        return f"edge.kcp.io/syncer-{self.env.agent_name}"

    def logs(self) -> str:
        return self.env.agent.logs()

    def _apply(self, spec: dict[str, Any]) -> None:
        """Create or replace the case's config and wait until it is merged (Ready)."""
        self.config = f"cf-{self.case}"
        self.env.config(self.config, spec)
        wait_for(
            lambda: (condition(self.config_conditions(), "Ready") or {}).get("status") == "True",
            timeout=SETUP,
            what=lambda: f"EdgeSyncConfig {self.config} Ready\n{self.logs()}",
        )

    def select(self, namespace: str, *, same_namespace: bool = False) -> None:
        self._apply(configmaps_in(namespace))  # identity placement: the same namespace in any case

    def select_namespaces(self) -> None:
        """Make the case's config select every Namespace of the mailbox (``version: v1, kind: Namespace``)."""
        self._apply({"downSyncedResources": [{"version": "v1", "kind": "Namespace"}]})

    def namespace_key(self, name: str) -> ObjectKey:
        """The sync key of the mailbox's Namespace ``name``."""
        return ObjectKey("sync", NAMESPACES_RULE, self.cluster, "", name)

    def narrow(self) -> None:
        never = {"matchLabels": {NEVER_LABEL: "true"}}
        self.env.config(self.config, configmaps_in(self.namespace, labelSelector=never))

    def delete_config(self) -> None:
        self.env.kcp.delete(f"{CONFIGS}/{self.config}")

    def delete_owner(self) -> None:
        self.delete_config()

    def config_conditions(self) -> list[Obj]:
        found = read(self.env.kcp, f"{CONFIGS}/{self.config}") or {}
        return list((found.get("status") or {}).get("conditions") or [])

    def target_location(self, namespace: str, name: str) -> tuple[str, str]:
        return namespace, name

    def barrier(self, namespace: str) -> None:
        name = self.barrier_name()
        ensure_namespace(self.env.kcp, namespace)
        metadata = {"name": name, "labels": {BARRIER_LABEL: "true"}}
        body = {"metadata": metadata, "stringData": {"barrier": "yes"}}
        self.env.kcp.create(SECRETS.path(namespace), body)
        wait_for(
            lambda: self.target_api.exists(SECRETS.path(namespace, name)),
            timeout=DEADLINE,
            what=f"the control config's copy of Secret {namespace}/{name}",
        )

    def end(self) -> None:
        # every case's config shares the control config's per-type rule: a key a case left parked
        # (its source no longer selected once the config goes) would count in the next case's
        # Conflicts; deleting the sources ends those keys
        for namespace, name in self.sources:
            with contextlib.suppress(Exception):
                self.delete_source(namespace, name)
        if self.config:
            with contextlib.suppress(Exception):
                self.delete_config()
        self.config = ""


@contextlib.contextmanager
def edge_harness(work: Path) -> Iterator[EdgeHarness]:
    """An edge stack with the control config."""
    with edge_environment(work) as env:
        env.start()
        env.wait_listening()
        env.config(CONTROL, CONTROL_SPEC)
        yield EdgeHarness(env)
