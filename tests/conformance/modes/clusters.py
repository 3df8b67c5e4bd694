"""Clusters mode in the suite: the case's config is a Cluster of its own, registered with the kubeconfig
of the physical cluster ``east``; its sources are ConfigMaps of workspace ``root:org:clusters`` labelled
for it, its copies land in ``east`` under the same namespace and name. The control Cluster is ``east``
itself."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from redis import Redis

from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.modes.clusters.identity import SyncedType, finalizer
from tests.conformance.harness import CONFIGMAPS, DEADLINE, SETUP, ModeHarness, Obj, read
from tests.support.clusters_env import CLUSTERS, LABEL, ClustersEnv, clusters_environment
from tests.support.waiting import wait_for

PHYSICAL = "east"
CASE_TYPE = SyncedType.parse(CONFIGMAPS.group_resource)


def _register(env: ClustersEnv, name: str) -> None:
    """Register Cluster ``name`` for the physical cluster and wait until it takes ConfigMaps."""
    env.register(name, env.physical[PHYSICAL].kubeconfig)
    env.wait_ready(name, timeout=SETUP)
    wait_for(
        lambda: env.synced(name, CASE_TYPE.group_resource).get("state") == "Accepted",
        timeout=SETUP,
        what=lambda: f"configmaps Accepted on Cluster {name}\n{env.agent.logs()}",
    )


class ClustersHarness(ModeHarness):
    """A clusters-mode stack (``tests.support.clusters_env``)."""

    mode = "clusters"
    narrow_deletes_copies = True
    """docs/clusters.md, Label-scheduled sync: an object relabelled away has its copy deleted."""
    delete_deletes_copies = False
    """docs/clusters.md, Deleting a Cluster: with --cluster-cleanup keep (the default) copies are left."""

    def __init__(self, env: ClustersEnv) -> None:
        super().__init__()
        self.env = env
        self.cluster, _ = cluster_identity(env.kcp)
        self.registered = ""

    @property
    def source_api(self) -> JsonApi:
        return self.env.kcp

    @property
    def target_api(self) -> JsonApi:
        return self.env.physical[PHYSICAL].api

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
    def case_cluster(self) -> str:
        """The case's Cluster."""
        return f"cf-{self.case}"

    @property
    def rule(self) -> str:
        return CASE_TYPE.rule_name(self.case_cluster)

    @property
    def finalizer(self) -> str:
        return finalizer(self.case_cluster)

    def logs(self) -> str:
        return self.env.agent.logs()

    def source_labels(self) -> dict[str, str]:
        return {LABEL: self.case_cluster}

    def select(self, namespace: str, *, same_namespace: bool = False) -> None:
        _register(self.env, self.case_cluster)  # identity placement: the same namespace in any case
        self.registered = self.case_cluster

    def narrow(self) -> None:
        unlabel = {"metadata": {"labels": {LABEL: None}}}
        for namespace, name in self.sources:
            self.env.kcp.merge_patch(CONFIGMAPS.path(namespace, name), unlabel)

    def delete_config(self) -> None:
        self.env.kcp.delete(f"{CLUSTERS}/{self.case_cluster}")

    def delete_owner(self) -> None:
        self.delete_config()

    def config_conditions(self) -> list[Obj]:
        found = read(self.env.kcp, f"{CLUSTERS}/{self.case_cluster}") or {}
        return list((found.get("status") or {}).get("conditions") or [])

    def target_location(self, namespace: str, name: str) -> tuple[str, str]:
        return namespace, name

    def barrier(self, namespace: str) -> None:
        name = self.barrier_name()
        body = {"metadata": {"name": name, "labels": {LABEL: PHYSICAL}}, "data": {"barrier": "yes"}}
        self.env.kcp.create(CONFIGMAPS.path(namespace), body)
        wait_for(
            lambda: self.target_api.exists(CONFIGMAPS.path(namespace, name)),
            timeout=DEADLINE,
            what=f"the control Cluster's copy of {namespace}/{name}",
        )

    def end(self) -> None:
        if self.registered:
            with contextlib.suppress(Exception):
                self.delete_config()
        self.registered = ""


@contextlib.contextmanager
def clusters_harness(work: Path) -> Iterator[ClustersHarness]:
    """A clusters stack with the physical cluster ``east``, registered as the control Cluster."""
    with clusters_environment(work) as env:
        env.add_physical(PHYSICAL)
        env.start()
        _register(env, PHYSICAL)
        yield ClustersHarness(env)
