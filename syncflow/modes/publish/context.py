"""What publish mode's processes need, built once per process from the settings."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from kubernetes.client import ApiClient
from redis import Redis

from syncflow import tasks
from syncflow.config import ConfigError, Settings
from syncflow.keys import ObjectKey
from syncflow.kube.bookmarks import RedisBookmarks
from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.publish.clients import PublishEndpoints
from syncflow.modes.publish.endpoint import ExportEndpoint, export_client, resolve
from syncflow.modes.publish.reconcile import SCHEMAS, PublishTarget
from syncflow.modes.publish.rules import KCP, SERVICE, PublishRules, RuleSettings, release_rule
from syncflow.modes.publish.watcher import PublishWatcher
from syncflow.queue.budget import RequestBudget
from syncflow.queue.layout import agent_prefix
from syncflow.sync.echoes import OwnWrites
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.process import WatchProcess
from syncflow.sync.registry import RuleRegistry
from syncflow.sync.worker import RuleWorker


def slice_ref(settings: Settings) -> str:
    """``--apiexportendpointslice-ref``, which publish mode requires."""
    if not settings.apiexportendpointslice_ref:
        raise ConfigError(
            "apiexportendpointslice_ref: required in publish mode (--apiexportendpointslice-ref)"
        )
    return settings.apiexportendpointslice_ref


def rule_settings(settings: Settings) -> RuleSettings:
    """The settings every publish rule carries."""
    return RuleSettings(settings.agent_name, settings.namespace, settings.orphan_policy)


@dataclass
class PublishContext:
    """Clients for the service cluster, the APIExport's workspace and its virtual workspace (workers)."""

    settings: Settings
    redis: Redis
    budget: RequestBudget | None = None

    @cached_property
    def kcp(self) -> ApiClient:
        """The kcp client of the kcp kubeconfig."""
        return load_client(self.settings.kcp_kubeconfig)

    @cached_property
    def endpoint(self) -> ExportEndpoint:
        """The managed APIExport (resolved once)."""
        return resolve(self.kcp, slice_ref(self.settings))

    def _budget(self, endpoint: str) -> Callable[[], None]:
        """Takes one request from the endpoint's budget shared by every worker (waits when empty)."""
        budget = self.budget
        return lambda: budget.take(endpoint) if budget is not None else None

    @cached_property
    def target(self) -> PublishTarget:
        """What the control-plane reconcilers talk to."""
        export_workspace = export_client(self.kcp, self.endpoint.export_path)
        export_workspace.before_request = self._budget(KCP)
        export_workspace.endpoint = KCP
        return PublishTarget(
            service=JsonApi(
                load_client(self.settings.kubeconfig), before_request=self._budget(SERVICE), endpoint=SERVICE
            ),
            export_workspace=export_workspace,
            export_name=self.endpoint.export_name,
            agent_name=self.settings.agent_name,
            selector=self.settings.published_resource_selector,
        )

    @cached_property
    def endpoints(self) -> PublishEndpoints:
        """The engine's view of the two sides."""
        return PublishEndpoints(self.kcp, self.target.service, slice_ref(self.settings), self._budget(KCP))

    @cached_property
    def worker(self) -> RuleWorker:
        """The engine's task bodies."""
        return RuleWorker(
            RuleRegistry(self.redis, self.settings.agent_name),
            self.endpoints,
            OwnWrites(self.redis, self.settings.agent_name),
        )

    def release(self, published: str, schema_name: str) -> int:
        """End a PublishedResource's rule and release our finalizer on every kcp object of its schema."""
        schema = self.target.export_workspace.get(f"{SCHEMAS}/{schema_name}")
        return self.worker.release(release_rule(schema["spec"], published, self.settings.agent_name))


_contexts: dict[int, PublishContext] = {}


def publish_context(settings: Settings, redis: Redis, budget: RequestBudget | None = None) -> PublishContext:
    """The context of these settings in this process."""
    context = _contexts.get(id(settings))
    if context is None or context.settings is not settings:
        context = _contexts[id(settings)] = PublishContext(settings, redis, budget)
    return context


def rule_worker(settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
    """The engine's task bodies with publish mode's endpoints (one per process)."""
    return publish_context(settings, redis, budget).worker


def watch_process(settings: Settings) -> WatchProcess:
    """``syncflow watch`` in publish mode: the Lease and the watches live in the service cluster."""
    ref = slice_ref(settings)
    tasks.bind(settings)
    redis = tasks.runtime.service.redis
    service = load_client(settings.kubeconfig)
    kcp = load_client(settings.kcp_kubeconfig)

    def build(enqueue: Callable[[Iterable[ObjectKey], bool], None]) -> PublishWatcher:
        service_json = JsonApi(service)
        rules = PublishRules(kcp, service_json, settings.published_resource_selector, rule_settings(settings))
        endpoints = PublishEndpoints(kcp, service_json, ref)
        bookmarks = RedisBookmarks(redis, agent_prefix(settings.agent_name) + "watch")
        manager = SyncManager(
            rules.desired,
            RuleRegistry(redis, settings.agent_name),
            endpoints,
            enqueue,
            bookmarks,
            OwnWrites(redis, settings.agent_name),
        )
        return PublishWatcher(kcp, service, rules, endpoints, manager, enqueue, bookmarks)

    return WatchProcess(settings, service, build)
