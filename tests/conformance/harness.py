"""One view of every mode for the conformance suite: ``ModeHarness``, the same verbs over a namespaced
type each mode syncs, on a live stack of that mode (real devclusters, Redis and syncflow processes).

Each case runs in its own source namespace and with its own config (``select``): a PublishedResource
publishing a CRD of its own, a SyncTarget with its own agent, a Cluster, an EdgeSyncConfig. Besides,
every stack keeps a *control* config for the whole session, which ``barrier`` uses to see that syncflow
has processed the source events made so far.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow.config import load_settings
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Failure, WorkQueue
from syncflow.sync.rule import Resource
from tests.support.redis import session_redis_url
from tests.support.waiting import wait_for

Obj = dict[str, Any]
SETUP = 90.0
"""Seconds a config may take to be served (a type published, a Cluster probed, an agent started)."""
DEADLINE = 30.0
"""Seconds syncflow may take for anything a case waits for."""
CONFIGMAPS = Resource(group="", version="v1", plural="configmaps", kind="ConfigMap", namespaced=True)
SECRETS = Resource(group="", version="v1", plural="secrets", kind="Secret", namespaced=True)
"""The type of the barriers of the modes whose control config is not of the case's type."""
NEVER_LABEL = "conformance.syncflow.dev/never"
"""A label no object of the suite has: a selector that requires it selects nothing."""


def read(api: JsonApi, path: str) -> Obj | None:
    """GET ``path``; None when it answers 404."""
    try:
        return api.get(path)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def ensure_namespace(api: JsonApi, name: str) -> None:
    """Create Namespace ``name`` unless it exists."""
    if not api.exists(f"/api/v1/namespaces/{name}"):
        api.create("/api/v1/namespaces", {"metadata": {"name": name}})


def finalizers(obj: Obj | None) -> list[str]:
    """An object's finalizers ([] for none, or no object)."""
    return list(((obj or {}).get("metadata") or {}).get("finalizers") or [])


def condition(conditions: list[Obj], type: str) -> Obj | None:
    """The condition of ``type`` in a ``status.conditions`` list."""
    return next((c for c in conditions if c.get("type") == type), None)


class ModeHarness(ABC):
    """A mode's stack, seen through the verbs every conformance case uses.

    ``begin`` starts a case (its namespace is ``namespace``), ``select`` makes the case's config select
    the objects of that namespace; the object verbs then work on the mode's synced type.
    """

    mode: ClassVar[str]
    content_field: ClassVar[str] = "data"
    """Where an object of ``resource`` keeps its content."""
    same_namespace_skip: ClassVar[str | None] = None
    """Why this mode can never place a copy in a namespace named like its source's (None: it can)."""
    narrow_deletes_copies: ClassVar[bool]
    """What the mode documents for the copies of objects its config stops selecting (``narrow``)."""
    delete_deletes_copies: ClassVar[bool]
    """What the mode documents for the copies of objects whose config is deleted (``delete_config``)."""
    adopts_foreign: ClassVar[bool] = False
    """Whether the mode adopts a namespaced target object without sync labels (publish mode, as
    api-syncagent does); every other mode refuses it."""

    def __init__(self) -> None:
        self.case = ""
        self.sources: list[tuple[str, str]] = []
        self._queues: dict[str, QueueService] = {}
        self._barriers = 0

    @property
    def resource(self) -> Resource:
        """The type the suite syncs in this mode (on both sides)."""
        return CONFIGMAPS

    # --- the stack --------------------------------------------------------------------------------

    @property
    @abstractmethod
    def source_api(self) -> JsonApi:
        """Where the sources live (the kcp workspace of the case)."""

    @property
    @abstractmethod
    def target_api(self) -> JsonApi:
        """Where the copies land (the service, physical or edge cluster)."""

    @property
    @abstractmethod
    def agent_name(self) -> str:
        """The agent that syncs the case's config (its labels, Redis keys and finalizer)."""

    @property
    @abstractmethod
    def source_cluster(self) -> str:
        """The logical cluster of the sources (the cluster part of their keys)."""

    @property
    @abstractmethod
    def rule(self) -> str:
        """The sync rule of the case's sources (the rule part of their keys)."""

    @property
    @abstractmethod
    def finalizer(self) -> str:
        """The finalizer the mode holds on the case's sources while they have a copy."""

    @property
    @abstractmethod
    def redis(self) -> Redis:
        """The stack's Redis."""

    @abstractmethod
    def logs(self) -> str:
        """The tail of every syncflow log of the stack."""

    # --- the case and its config ------------------------------------------------------------------

    @property
    def namespace(self) -> str:
        """The case's source namespace."""
        return f"cf-{self.case}"

    def begin(self, case: str) -> None:
        """Start a case named ``case`` (a DNS label)."""
        self.case = case
        self.sources = []
        self._barriers = 0

    @abstractmethod
    def end(self) -> None:
        """End the case: remove what is left of its config."""

    @abstractmethod
    def select(self, namespace: str, *, same_namespace: bool = False) -> None:
        """Make the case's config select the sources in ``namespace`` and wait until it is served;
        ``same_namespace``: copies land in the namespace named like their source's."""

    @abstractmethod
    def narrow(self) -> None:
        """Change the case's config (the mode's natural way) so that it selects none of its sources."""

    @abstractmethod
    def delete_config(self) -> None:
        """Delete the config that selects the case's sources."""

    @abstractmethod
    def delete_owner(self) -> None:
        """Delete what owns the case's sync (for every mode here: the same object as the config)."""

    @abstractmethod
    def config_conditions(self) -> list[Obj]:
        """``status.conditions`` of the case's config."""

    @abstractmethod
    def target_location(self, namespace: str, name: str) -> tuple[str, str]:
        """Where the copy of source ``namespace/name`` lands (namespace, name), as the engine places it."""

    @abstractmethod
    def barrier(self, namespace: str) -> None:
        """Create an object the control config syncs in source ``namespace`` and wait for its copy:
        syncflow has then processed the source events made before."""

    def barrier_name(self) -> str:
        """A name for the next barrier object of the case."""
        self._barriers += 1
        return f"barrier-{self._barriers}"

    def source_labels(self) -> dict[str, str]:
        """Labels a source needs to be selected by the case's config."""
        return {}

    # --- objects ----------------------------------------------------------------------------------

    def body(
        self,
        namespace: str,
        name: str,
        data: dict[str, str],
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
    ) -> Obj:
        """An object of the suite's type."""
        metadata: Obj = {"name": name, "namespace": namespace}
        if labels:
            metadata["labels"] = labels
        if annotations:
            metadata["annotations"] = annotations
        return {
            "apiVersion": self.resource.api_version,
            "kind": self.resource.kind,
            "metadata": metadata,
            self.content_field: dict(data),
        }

    def content(self, obj: Obj) -> dict[str, str]:
        """The content of an object of the suite's type."""
        return dict(obj.get(self.content_field) or {})

    def create_source(self, namespace: str, name: str, data: dict[str, str]) -> Obj:
        """Create a source object selected by the case's config (and its namespace when missing)."""
        ensure_namespace(self.source_api, namespace)
        self.sources.append((namespace, name))
        body = self.body(namespace, name, data, labels=self.source_labels())
        return self.source_api.create(self.resource.path(namespace), body)

    def edit_source(self, namespace: str, name: str, data: dict[str, str]) -> Obj:
        """Change a source object's content."""
        return self.source_api.merge_patch(self.resource.path(namespace, name), {self.content_field: data})

    def delete_source(self, namespace: str, name: str) -> None:
        """Delete a source object (it goes once its finalizers are released)."""
        self.source_api.delete(self.resource.path(namespace, name))

    def source(self, namespace: str, name: str) -> Obj | None:
        """A source object, None once it is gone."""
        return read(self.source_api, self.resource.path(namespace, name))

    def create_target(
        self,
        namespace: str,
        name: str,
        data: dict[str, str],
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
    ) -> Obj:
        """Create an object of the suite's type on the target, by hand (not a copy syncflow made)."""
        ensure_namespace(self.target_api, namespace)
        body = self.body(namespace, name, data, labels, annotations)
        return self.target_api.create(self.resource.path(namespace), body)

    def target(self, namespace: str, name: str) -> Obj | None:
        """The target object at ``namespace/name``, None when there is none."""
        return read(self.target_api, self.resource.path(namespace, name))

    def copy_of(self, namespace: str, name: str) -> Obj | None:
        """The target object where the copy of source ``namespace/name`` lands."""
        return self.target(*self.target_location(namespace, name))

    def wait_copy(self, namespace: str, name: str) -> Obj:
        """Wait until the copy of source ``namespace/name`` has the source's content."""

        def synced() -> Obj | None:
            source, copy = self.source(namespace, name), self.copy_of(namespace, name)
            return copy if source and copy and self.content(copy) == self.content(source) else None

        found: Obj = wait_for(synced, timeout=DEADLINE, what=f"the copy of {namespace}/{name} ({self.mode})")
        return found

    def events_for(self, namespace: str, name: str) -> list[Obj]:
        """Events about source ``namespace/name`` recorded in its own namespace, oldest first."""
        items = self.source_api.get(f"/api/v1/namespaces/{namespace}/events").get("items") or []
        about = [
            e
            for e in items
            if (e.get("involvedObject") or {}).get("name") == name
            and (e.get("involvedObject") or {}).get("kind") in ("", self.resource.kind)
        ]
        return sorted(about, key=lambda e: str(e.get("lastTimestamp") or e["metadata"]["name"]))

    # --- the queue --------------------------------------------------------------------------------

    def key(self, namespace: str, name: str) -> ObjectKey:
        """The sync key of source ``namespace/name``."""
        return ObjectKey("sync", self.rule, self.source_cluster, namespace, name)

    def queue(self) -> QueueService:
        """The work queues of the case's agent, as ``syncflow failures`` reads them."""
        agent = self.agent_name
        if agent not in self._queues:
            settings = load_settings(agent_name=agent, redis_url=session_redis_url())
            self._queues[agent] = QueueService(self.redis, settings, lambda messages, together=False: None)
        return self._queues[agent]

    def parked(self, namespace: str, name: str) -> Failure | None:
        """The failure record of the source's sync key while it is parked, else None."""
        key = self.key(namespace, name)
        return self._sync_queue().failure(key) if self._sync_queue().is_parked(key) else None

    def held(self, namespace: str, name: str) -> bool:
        """Whether a run of the source's sync key is still to come (pending, leased or backing off)."""
        return bool(self._sync_queue().held([self.key(namespace, name)]))

    def _sync_queue(self) -> WorkQueue:
        """The work queue of ``sync`` keys (docs/operations.md: the engine's keys run there)."""
        return self.queue().queues["sync"]
