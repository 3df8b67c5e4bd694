"""Publish-mode keyed tasks: ``syncflow.projection``, ``syncflow.apiexport``, ``syncflow.sync`` and
``syncflow.status``."""

from __future__ import annotations

from syncflow.keys import ObjectKey
from syncflow.modes.publish.context import PublishContext, publish_context
from syncflow.modes.publish.keys import export_key
from syncflow.modes.publish.reconcile import list_published, reconcile_export, reconcile_projection
from syncflow.modes.publish.resync import due, resync
from syncflow.queue.layout import PERIODIC_QUEUE
from syncflow.sync.reconciler import return_status, sync_object
from syncflow.sync.rule import SyncRule
from syncflow.tasks import app, keyed_task, runtime


def _context() -> PublishContext:
    return publish_context(runtime.settings, runtime.service.redis, runtime.service.budget)


def _rule(context: PublishContext, published: str) -> SyncRule | None:
    settings = context.settings
    return context.rules.get(context.target, published, settings.namespace, settings.orphan_policy)


@keyed_task("projection", queue="sync")
def projection(key: ObjectKey) -> None:
    """Project the PublishedResource ``key.name`` into an APIResourceSchema."""
    context = _context()
    export = export_key(context.endpoint.export_cluster, context.endpoint.export_name)
    reconcile_projection(context.target, key.name, lambda: runtime.service.add(export), context.release)


@keyed_task("apiexport", queue="sync")
def apiexport(key: ObjectKey) -> None:
    """Merge every ready schema and the claims they need into the managed APIExport."""
    reconcile_export(_context().target)


@keyed_task("sync", queue="sync")
def sync(key: ObjectKey) -> None:
    """Sync one kcp object into the service cluster (spec down, status up, deletion)."""
    context = _context()
    rule = _rule(context, key.rule)
    if rule is not None:
        sync_object(rule, context.sides, key)


@keyed_task("status", queue="status")
def status(key: ObjectKey) -> None:
    """Return the local copy's status to the kcp object."""
    context = _context()
    rule = _rule(context, key.rule)
    if rule is not None:
        return_status(rule, context.sides, key)


@app.task(name="syncflow.resync", queue=PERIODIC_QUEUE)  # type: ignore[untyped-decorator]
def resync_task() -> int:
    """Beat: resync each PublishedResource whose period has come (missing copies and orphans)."""
    context = _context()
    settings = runtime.settings
    redis = runtime.service.redis
    rules = [
        rule
        for obj in list_published(context.target)
        if due(redis, settings.agent_name, obj["metadata"]["name"], settings.resync_period)
        and (rule := _rule(context, obj["metadata"]["name"]))
    ]
    if not rules:
        return 0
    return resync(
        rules,
        context.virtual_workspace("*"),
        context.target.service,
        lambda keys: runtime.service.add_many(keys, bulk=True),
    )
