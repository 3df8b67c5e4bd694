"""Publish mode's hooks (``syncflow.app.modes``): api-syncagent's PublishedResources."""

from __future__ import annotations

from typing import Any

from redis import Redis

from syncflow.app.mode import Mode
from syncflow.config import Settings
from syncflow.kube.clients import cluster_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.base import tick
from syncflow.modes.publish.clients import PublishEndpoints
from syncflow.modes.publish.context import PublishContext, publish_context, rule_settings, slice_ref
from syncflow.modes.publish.endpoint import check_endpoint_slice
from syncflow.modes.publish.rules import PublishRules
from syncflow.modes.publish.watcher import PublishWatcher
from syncflow.queue.budget import RequestBudget
from syncflow.sync.process import WatchProcess
from syncflow.sync.watches import Enqueue
from syncflow.sync.worker import RuleWorker


class PublishMode(Mode):
    """The service cluster's types published through an APIExport's virtual workspace."""

    name = "publish"

    def rule_worker(self, settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
        """The engine's task bodies with publish mode's endpoints (one per process)."""
        return publish_context(settings, redis, budget).worker

    def watch_process(self, settings: Settings) -> WatchProcess:
        """The Lease and the watches live in the service cluster."""
        ref = slice_ref(settings)
        context = PublishContext.watching(settings)
        service = cluster_client(settings)
        kcp = context.kcp

        def build(enqueue: Enqueue) -> PublishWatcher:
            service_json = JsonApi(service)
            rules = PublishRules(
                kcp, service_json, settings.published_resource_selector, rule_settings(settings)
            )
            endpoints = PublishEndpoints(kcp, service_json, ref)
            manager, bookmarks = context.sync_manager(rules.desired, endpoints, enqueue)
            return PublishWatcher(kcp, service, rules, endpoints, manager, enqueue, bookmarks)

        return context.watch_process(service, build)

    def beat_entries(self, settings: Settings) -> dict[str, dict[str, Any]]:
        """The PublishedResources' Conflicts and Parked conditions, once per status period (15 s at
        most)."""
        return tick("publish-tick", min(15.0, settings.status_period))

    def preflight(self, settings: Settings) -> None:
        """The endpoint slice resolves."""
        check_endpoint_slice(settings)


MODE = PublishMode()
