"""What publish-mode tasks need in a worker process, built once per process from the settings."""

from __future__ import annotations

from syncflow.config import ConfigError, Settings
from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.publish.endpoint import ExportEndpoint, export_client, resolve
from syncflow.modes.publish.reconcile import PublishTarget

_built: dict[int, tuple[Settings, PublishTarget, ExportEndpoint]] = {}


def publish_target(settings: Settings) -> tuple[PublishTarget, ExportEndpoint]:
    """Clients for the service cluster and the APIExport's workspace (resolved once per settings)."""
    cached = _built.get(id(settings))
    if cached is not None and cached[0] is settings:
        return cached[1], cached[2]
    if not settings.apiexportendpointslice_ref:
        raise ConfigError(
            "apiexportendpointslice_ref: required in publish mode (--apiexportendpointslice-ref)"
        )
    service = load_client(settings.kubeconfig)
    kcp = load_client(settings.kcp_kubeconfig)
    endpoint = resolve(kcp, settings.apiexportendpointslice_ref)
    target = PublishTarget(
        service=JsonApi(service),
        export_workspace=export_client(kcp, endpoint.export_path),
        export_name=endpoint.export_name,
        agent_name=settings.agent_name,
        selector=settings.published_resource_selector,
    )
    _built[id(settings)] = (settings, target, endpoint)
    return target, endpoint
