"""What publish mode's processes need, built once per process from the settings."""

from __future__ import annotations

from functools import cached_property

from redis import Redis

from syncflow.config import ConfigError, Settings
from syncflow.kube.clients import cluster_client, for_cluster
from syncflow.modes.base import ModeContext, context_of
from syncflow.modes.publish.clients import PublishEndpoints
from syncflow.modes.publish.endpoint import ExportEndpoint, resolve
from syncflow.modes.publish.reconcile import SCHEMAS, PublishTarget
from syncflow.modes.publish.rules import KCP, SERVICE, RuleSettings, release_rule
from syncflow.queue.budget import RequestBudget


def slice_ref(settings: Settings) -> str:
    """``--apiexportendpointslice-ref``, which publish mode requires."""
    if not settings.apiexportendpointslice_ref:
        raise ConfigError(
            "apiexportendpointslice_ref: required in publish mode (--apiexportendpointslice-ref)"
        )
    return settings.apiexportendpointslice_ref


def rule_settings(settings: Settings) -> RuleSettings:
    """The settings every publish rule carries."""
    return RuleSettings(
        settings.agent_name,
        settings.namespace,
        settings.orphan_policy,
        sync_enabled="sync" not in settings.disabled_controllers,
    )


class PublishContext(ModeContext):
    """Clients for the service cluster, the APIExport's workspace and its virtual workspace (workers)."""

    @cached_property
    def endpoint(self) -> ExportEndpoint:
        """The managed APIExport (resolved once)."""
        return resolve(self.kcp, slice_ref(self.settings))

    @cached_property
    def target(self) -> PublishTarget:
        """What the control-plane reconcilers talk to."""
        export_workspace = self.client(for_cluster(self.kcp, self.endpoint.export_path), KCP)
        return PublishTarget(
            service=self.client(cluster_client(self.settings), SERVICE),
            export_workspace=export_workspace,
            export_name=self.endpoint.export_name,
            agent_name=self.settings.agent_name,
            selector=self.settings.published_resource_selector,
        )

    @cached_property
    def endpoints(self) -> PublishEndpoints:
        """The engine's view of the two sides."""
        return PublishEndpoints(
            self.kcp, self.target.service, slice_ref(self.settings), self.budget_hook(KCP)
        )

    def release(self, published: str, schema_name: str) -> int:
        """End a PublishedResource's rule and release our finalizer on every kcp object of its schema;
        0 at once when its release has completed since the watcher last marked the rule gone (every
        later projection of a disabled PublishedResource, e.g. after a CRD relist)."""
        if self.worker.registry.released(published):
            return 0
        schema = self.target.export_workspace.get(f"{SCHEMAS}/{schema_name}")
        return self.worker.release(release_rule(schema["spec"], published, self.settings.agent_name))


def publish_context(settings: Settings, redis: Redis, budget: RequestBudget | None = None) -> PublishContext:
    """The context of these settings in this process."""
    return context_of(PublishContext, settings, redis, budget)
