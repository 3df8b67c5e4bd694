"""Publish mode's control-plane keys (the engine's ``sync``/``status`` keys are in ``syncflow.sync.keys``).

- ``projection/<publishedresource>/service//<publishedresource>``: project one PublishedResource;
- ``apiexport/<export>/<export cluster>//<export>``: merge schemas and claims into the APIExport.
"""

from __future__ import annotations

from syncflow.queue.keys import ObjectKey

SERVICE_CLUSTER = "service"


def projection_key(published: str) -> ObjectKey:
    """The key that projects one PublishedResource."""
    return ObjectKey("projection", published, SERVICE_CLUSTER, "", published)


def export_key(export_cluster: str, export_name: str) -> ObjectKey:
    """The key that reconciles the managed APIExport."""
    return ObjectKey("apiexport", export_name, export_cluster, "", export_name)
