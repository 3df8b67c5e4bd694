"""kcp facts every part needs: a workspace's LogicalCluster and its identity."""

from __future__ import annotations

from syncflow.kube.jsonapi import JsonApi

LOGICAL_CLUSTER = "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster"
CLUSTER_ANNOTATION = "kcp.io/cluster"
PATH_ANNOTATION = "kcp.io/path"


def cluster_identity(api: JsonApi) -> tuple[str, str]:
    """(logical-cluster name, path) of the workspace ``api`` points at (root has no path: its name)."""
    logical_cluster = api.get(LOGICAL_CLUSTER)
    annotations = logical_cluster["metadata"].get("annotations") or {}
    name = annotations.get(CLUSTER_ANNOTATION, "")
    return name, annotations.get(PATH_ANNOTATION) or name
