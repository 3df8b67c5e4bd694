"""Start-up resolution of the APIExport syncflow serves, from ``--apiexportendpointslice-ref``.

In the workspace the kcp kubeconfig points at: the APIExportEndpointSlice, that workspace's
``LogicalCluster`` (name and ``kcp.io/path``), then the APIExport the slice names and its own
logical cluster. The virtual workspace URL appears on the slice only once some workspace binds the
export; until then publish mode's rules stay pending and say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from syncflow.config import Settings
from syncflow.kube.clients import for_cluster, kcp_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.runtime.preflight import PreflightError

Obj = dict[str, Any]
APIS = "/apis/apis.kcp.io/v1alpha1"


@dataclass(frozen=True)
class ExportEndpoint:
    """Where the managed APIExport lives and where its virtual workspace is served."""

    slice_name: str
    export_name: str
    export_cluster: str
    export_path: str
    urls: tuple[str, ...]


def resolve(kcp: ApiClient, slice_ref: str) -> ExportEndpoint:
    """Read the endpoint slice, the APIExport it names and their logical clusters."""
    workspace = JsonApi(kcp)
    endpoint_slice = workspace.get(f"{APIS}/apiexportendpointslices/{slice_ref}")
    _, workspace_path = cluster_identity(workspace)
    export_ref = (endpoint_slice.get("spec") or {}).get("export") or {}
    export_path = export_ref.get("path") or workspace_path
    export_api = export_client(kcp, export_path)
    export_api.get(f"{APIS}/apiexports/{export_ref['name']}")
    export_cluster, _ = cluster_identity(export_api)
    urls = tuple(
        e["url"] for e in (endpoint_slice.get("status") or {}).get("endpoints") or [] if e.get("url")
    )
    return ExportEndpoint(slice_ref, export_ref["name"], export_cluster, export_path, urls)


def export_client(kcp: ApiClient, export_path: str) -> JsonApi:
    """A client for the workspace that holds the APIExport."""
    return JsonApi(for_cluster(kcp, export_path))


def check_endpoint_slice(settings: Settings) -> None:
    """Start-up check (``syncflow.runtime.preflight``): the APIExportEndpointSlice and its APIExport
    resolve (api-syncagent exits when they do not), so a wrong ``--apiexportendpointslice-ref`` is one
    line at start, not a retry loop."""
    ref = settings.apiexportendpointslice_ref or ""
    try:
        resolve(kcp_client(settings), ref)
    except ApiException as exc:
        raise PreflightError(
            f"failed to resolve APIExportEndpointSlice {ref!r} in the workspace of --kcp-kubeconfig "
            f"(--apiexportendpointslice-ref): {exc.status} {exc.reason}"
        ) from None
