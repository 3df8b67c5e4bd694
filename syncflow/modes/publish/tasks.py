"""Publish mode's control-plane tasks: ``syncflow.projection``, ``syncflow.apiexport``, and
``syncflow.publish-tick`` (beat) for the PublishedResources' ``Conflicts`` and ``Parked`` conditions."""

from __future__ import annotations

import logging

from syncflow.modes.publish.context import PublishContext, publish_context
from syncflow.modes.publish.keys import export_key
from syncflow.modes.publish.reconcile import (
    PUBLISHED_RESOURCES,
    list_published,
    reconcile_export,
    reconcile_projection,
)
from syncflow.queue.keys import ObjectKey
from syncflow.sync import trouble
from syncflow.tasks import keyed_task, periodic_task, runtime
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.publish")


def _context() -> PublishContext:
    return publish_context(runtime.settings, runtime.service.redis, runtime.service.budget)


def _disabled(controller: str, key: ObjectKey) -> bool:
    """Whether ``--disabled-controllers`` switched ``controller`` off (the key then ends quietly)."""
    if controller in runtime.settings.disabled_controllers:
        log_event(logger, "publish.controller_disabled", controller=controller, key=str(key))
        return True
    return False


@keyed_task("projection", queue="sync")
def projection(key: ObjectKey) -> None:
    """Project the PublishedResource ``key.name`` into an APIResourceSchema."""
    if _disabled("apiresourceschema", key):
        return
    context = _context()
    export = export_key(context.endpoint.export_cluster, context.endpoint.export_name)
    reconcile_projection(
        context.target,
        key.name,
        lambda: runtime.service.add(export),
        lambda schema: context.release(key.name, schema),
    )


@keyed_task("apiexport", queue="sync")
def apiexport(key: ObjectKey) -> None:
    """Merge every ready schema and the claims they need into the managed APIExport."""
    if _disabled("apiexport", key):
        return
    reconcile_export(_context().target)


@periodic_task("syncflow.publish-tick")
def tick() -> int:
    """Beat: write each PublishedResource's objects in conflict and parked (its rule has its name)."""
    target = _context().target
    published = list_published(target)
    names = [obj["metadata"]["name"] for obj in published]
    found = trouble.troubles(runtime.service, names)
    return sum(
        trouble.report(target.service, f"{PUBLISHED_RESOURCES}/{name}", obj, trouble.total(found, [name]))
        for name, obj in zip(names, published, strict=True)
        if not obj["metadata"].get("deletionTimestamp")
    )
