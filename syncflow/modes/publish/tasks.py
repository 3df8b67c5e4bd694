"""Publish-mode keyed tasks: ``syncflow.projection`` and ``syncflow.apiexport``."""

from __future__ import annotations

from syncflow.keys import ObjectKey
from syncflow.modes.publish.context import publish_target
from syncflow.modes.publish.keys import export_key
from syncflow.modes.publish.reconcile import reconcile_export, reconcile_projection
from syncflow.tasks import keyed_task, runtime


@keyed_task("projection", queue="sync")
def projection(key: ObjectKey) -> None:
    """Project the PublishedResource ``key.name`` into an APIResourceSchema."""
    target, endpoint = publish_target(runtime.settings)
    export = export_key(endpoint.export_cluster, endpoint.export_name)
    reconcile_projection(target, key.name, lambda: runtime.service.add(export))


@keyed_task("apiexport", queue="sync")
def apiexport(key: ObjectKey) -> None:
    """Merge every ready schema and the claims they need into the managed APIExport."""
    reconcile_export(publish_target(runtime.settings)[0])
