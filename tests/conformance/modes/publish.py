"""Publish mode in the suite: the case's config is a PublishedResource of a CRD of its own (as the
publish tests publish them), its sources are objects of that type in workspace ``root:org:team-1``,
its copies land in the service cluster where ``spec.naming`` puts them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from redis import Redis

from syncflow.kube.jsonapi import JsonApi
from syncflow.sync.placement import locate
from syncflow.sync.rule import NamingPlacement, Resource
from tests.conformance.harness import DEADLINE, NEVER_LABEL, ModeHarness, Obj, read
from tests.support.publish_env import (
    CLEANUP,
    PUBLISHED,
    Published,
    PublishEnv,
    cluster_of,
    publish_environment,
)

TEAM = "team-1"
SAME_NAMESPACE = {"namespace": "{{ .Object.metadata.namespace }}", "name": "{{ .Object.metadata.name }}"}
"""A naming rule that keeps the source's namespace and name (what a service owner may write)."""


def _published(env: PublishEnv, name: str, group: str, **spec: Any) -> Published:
    return Published(env, name, group, "items", "Item", **spec)


class PublishHarness(ModeHarness):
    """A publish-mode stack (``tests.support.publish_env``)."""

    mode = "publish"
    content_field = "spec"
    adopts_foreign = True
    """docs/sync.md: api-syncagent's adoption of a namespaced local object of the copy's name."""
    narrow_deletes_copies = False
    """docs/sync.md, Filters: an object that stops matching is released, its copy kept (orphan policy
    keep, the default)."""
    delete_deletes_copies = False
    """docs/sync.md, Turning sync off: deleting a PublishedResource releases its objects; copies stay."""

    def __init__(self, env: PublishEnv) -> None:
        super().__init__()
        self.env = env
        self.cluster = cluster_of(env, TEAM)
        self.published: Published | None = None
        self.naming: dict[str, str] = {}
        self.control = _published(env, "cf-control", "control.conformance.example.com")

    @property
    def source_api(self) -> JsonApi:
        return self.env.workspace(f"root:org:{TEAM}")

    @property
    def target_api(self) -> JsonApi:
        return self.env.service

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
        return self._current().name

    @property
    def finalizer(self) -> str:
        return CLEANUP

    @property
    def resource(self) -> Resource:
        published = self._current()
        return Resource(group=published.group, version="v1", plural="items", kind="Item", namespaced=True)

    def logs(self) -> str:
        return self.env.agent.logs()

    def _current(self) -> Published:
        assert self.published is not None, "select() first: the case's type is published by its config"
        return self.published

    def select(self, namespace: str, *, same_namespace: bool = False) -> None:
        self.naming = SAME_NAMESPACE if same_namespace else {}
        spec = {"naming": self.naming} if self.naming else {}
        group = f"{self.case}.conformance.example.com"
        self.published = _published(self.env, f"cf-{self.case}", group, **spec)

    def narrow(self) -> None:
        self.env.service.merge_patch(
            f"{PUBLISHED}/{self._current().name}",
            {"spec": {"filter": {"resource": {"matchLabels": {NEVER_LABEL: "true"}}}}},
        )

    def delete_config(self) -> None:
        self.env.service.delete(f"{PUBLISHED}/{self._current().name}")

    def delete_owner(self) -> None:
        self.delete_config()

    def config_conditions(self) -> list[Obj]:
        found = read(self.env.service, f"{PUBLISHED}/{self._current().name}") or {}
        return list((found.get("status") or {}).get("conditions") or [])

    def target_location(self, namespace: str, name: str) -> tuple[str, str]:
        obj = {"metadata": {"namespace": namespace, "name": name}}
        # enableWorkspacePaths is off: the engine renders .ClusterPath as the logical cluster
        placement = NamingPlacement(namespace=self.naming.get("namespace"), name=self.naming.get("name"))
        where = locate(placement, obj, self.cluster, self.cluster, target_namespaced=True)
        return where.namespace, where.name

    def barrier(self, namespace: str) -> None:
        name = self.barrier_name()
        self.control.create(TEAM, name, {"barrier": "yes"}, namespace=namespace)
        self.control.wait_copy(self.cluster, name, namespace=namespace, timeout=DEADLINE)

    def end(self) -> None:
        if self.published is not None:
            with contextlib.suppress(Exception):
                self.delete_config()
        self.published = None
        self.naming = {}


@contextlib.contextmanager
def publish_harness(work: Path) -> Iterator[PublishHarness]:
    """A publish-mode stack as the publish tests run it."""
    with publish_environment(work) as env:
        yield PublishHarness(env)
