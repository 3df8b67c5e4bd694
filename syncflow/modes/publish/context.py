"""What publish-mode tasks need in a worker process, built once per process from the settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from kubernetes.client import ApiClient
from redis import Redis

from syncflow.config import ConfigError, Settings
from syncflow.kube.clients import for_url, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.publish.endpoint import ExportEndpoint, export_client, resolve
from syncflow.modes.publish.reconcile import SCHEMAS, PublishTarget
from syncflow.modes.publish.rules import RuleCache, resource_of
from syncflow.queue.budget import RequestBudget
from syncflow.queue.errors import TransientError
from syncflow.sync.echoes import OwnWrites
from syncflow.sync.reconciler import Sides, release_all


@dataclass
class PublishContext:
    """Clients for the service cluster, the APIExport's workspace and its virtual workspace."""

    settings: Settings
    redis: Redis
    budget: RequestBudget | None = None
    rules: RuleCache = field(default_factory=RuleCache)
    _clusters: dict[str, JsonApi] = field(default_factory=dict)

    @cached_property
    def kcp(self) -> ApiClient:
        """The kcp client of the kcp kubeconfig."""
        return load_client(self.settings.kcp_kubeconfig)

    @cached_property
    def endpoint(self) -> ExportEndpoint:
        """The managed APIExport (resolved once)."""
        if not self.settings.apiexportendpointslice_ref:
            raise ConfigError(
                "apiexportendpointslice_ref: required in publish mode (--apiexportendpointslice-ref)"
            )
        return resolve(self.kcp, self.settings.apiexportendpointslice_ref)

    def _budget(self, endpoint: str) -> Callable[[], None]:
        """Takes one request from the endpoint's budget shared by every worker (waits when empty)."""
        budget = self.budget
        return lambda: budget.take(endpoint) if budget is not None else None

    @cached_property
    def target(self) -> PublishTarget:
        """What the control-plane reconcilers talk to."""
        export_workspace = export_client(self.kcp, self.endpoint.export_path)
        export_workspace.before_request = self._budget(KCP_ENDPOINT)
        return PublishTarget(
            service=JsonApi(
                load_client(self.settings.kubeconfig), before_request=self._budget(SERVICE_ENDPOINT)
            ),
            export_workspace=export_workspace,
            export_name=self.endpoint.export_name,
            agent_name=self.settings.agent_name,
            selector=self.settings.published_resource_selector,
        )

    def virtual_workspace(self, cluster: str) -> JsonApi:
        """The virtual workspace URL of one logical cluster."""
        if cluster not in self._clusters:
            urls = self.endpoint.urls or resolve(self.kcp, self.endpoint.slice_name).urls
            if not urls:
                raise TransientError("the APIExport has no virtual workspace URL yet (no binding)")
            self._clusters[cluster] = JsonApi(
                for_url(self.kcp, f"{urls[0]}/clusters/{cluster}"), before_request=self._budget(KCP_ENDPOINT)
            )
        return self._clusters[cluster]

    def release(self, schema_name: str) -> int:
        """Release our finalizer on every kcp object of a schema (through the virtual workspace)."""
        schema = self.target.export_workspace.get(f"{SCHEMAS}/{schema_name}")
        return release_all(resource_of(schema["spec"]), "release", self.sides, self.virtual_workspace("*"))

    @cached_property
    def sides(self) -> Sides:
        """The two endpoints of the sync engine."""
        return Sides(
            self.virtual_workspace, self.target.service, OwnWrites(self.redis, self.settings.agent_name)
        )


KCP_ENDPOINT = "kcp"
SERVICE_ENDPOINT = "service"
_contexts: dict[int, PublishContext] = {}


def publish_context(settings: Settings, redis: Redis, budget: RequestBudget | None = None) -> PublishContext:
    """The context of these settings in this process."""
    context = _contexts.get(id(settings))
    if context is None or context.settings is not settings:
        context = _contexts[id(settings)] = PublishContext(settings, redis, budget)
    return context
