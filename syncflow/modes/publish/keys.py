"""Object keys of publish mode, and how watched objects map to them.

- ``projection/<publishedresource>/service//<publishedresource>``: project one PublishedResource;
- ``apiexport/<export>/<export cluster>//<export>``: merge schemas and claims into the APIExport;
- ``sync/<publishedresource>/<cluster>/<namespace>/<name>``: sync one kcp object (and its copy);
- ``status/<publishedresource>/<cluster>/<namespace>/<name>``: return its copy's status to kcp.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncflow.keys import ObjectKey
from syncflow.kube.refs import ObjectRef
from syncflow.sync.metadata import REMOTE_CLUSTER_LABEL, REMOTE_NAME_ANNOTATION, REMOTE_NAMESPACE_ANNOTATION

SERVICE_CLUSTER = "service"


def projection_key(published: str) -> ObjectKey:
    """The key that projects one PublishedResource."""
    return ObjectKey("projection", published, SERVICE_CLUSTER, "", published)


def export_key(export_cluster: str, export_name: str) -> ObjectKey:
    """The key that reconciles the managed APIExport."""
    return ObjectKey("apiexport", export_name, export_cluster, "", export_name)


def sync_key(published: str, ref: ObjectRef) -> ObjectKey:
    """The key that syncs one kcp object of a PublishedResource."""
    return ObjectKey("sync", published, ref.cluster, ref.namespace, ref.name)


def status_key(published: str, ref: ObjectRef) -> ObjectKey:
    """The key that returns a local copy's status to its kcp object."""
    return ObjectKey("status", published, ref.cluster, ref.namespace, ref.name)


def remote_ref(local: Mapping[str, Any]) -> ObjectRef | None:
    """The kcp object a local copy belongs to, from its sync label and annotations (None if not a copy)."""
    metadata = local.get("metadata") or {}
    cluster = (metadata.get("labels") or {}).get(REMOTE_CLUSTER_LABEL)
    annotations = metadata.get("annotations") or {}
    name = annotations.get(REMOTE_NAME_ANNOTATION)
    if not cluster or not name:
        return None
    return ObjectRef(cluster, annotations.get(REMOTE_NAMESPACE_ANNOTATION, ""), name)
