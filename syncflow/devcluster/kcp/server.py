"""The kcp-mode server: ``/clusters/<name|path|*>/…`` and ``/services/apiexport/…`` routing."""

from __future__ import annotations

from aiohttp import web

from syncflow.devcluster import errors
from syncflow.devcluster.crud import Target
from syncflow.devcluster.kcp import compute
from syncflow.devcluster.kcp.apis import APIs
from syncflow.devcluster.kcp.hashes import CLUSTER_ANNOTATION
from syncflow.devcluster.kcp.heartbeat import DEFAULT_THRESHOLD, HeartbeatMonitor
from syncflow.devcluster.kcp.tenancy import Tenancy
from syncflow.devcluster.kcp.types import KCP_TYPES, workspace_builtin_types
from syncflow.devcluster.kcp.views import ExportView, WorkspaceView
from syncflow.devcluster.rbac import Identity
from syncflow.devcluster.server import DEBUG_PATHS, DevCluster, ServerConfig, identity_of
from syncflow.devcluster.store import Obj
from syncflow.devcluster.views import View

_OPEN_PATHS = frozenset({"/healthz", "/readyz", "/livez", "/version", *DEBUG_PATHS})


def _drop_cluster_annotation(t: Target, new: Obj, old: Obj | None) -> None:
    """``kcp.io/cluster`` is set on every read and never stored."""
    annotations = new["metadata"].get("annotations")
    if annotations and CLUSTER_ANNOTATION in annotations:
        del annotations[CLUSTER_ANNOTATION]
        if not annotations:
            del new["metadata"]["annotations"]


class KcpDevCluster(DevCluster):
    """A devcluster that serves the subset of kcp sync agents rely on."""

    def __init__(
        self, config: ServerConfig | None = None, heartbeat_threshold: float = DEFAULT_THRESHOLD
    ) -> None:
        self.heartbeat_threshold = heartbeat_threshold
        super().__init__(config, (*workspace_builtin_types(), *KCP_TYPES))

    def bootstrap(self) -> None:
        """The root and root:compute workspaces, and the kcp controllers hooked into every write."""
        self.objects.admission.append(_drop_cluster_annotation)
        self.tenancy = Tenancy(self.objects, self.lifecycle, self.registry, lambda: self.config.external_url)
        self.apis = APIs(self.objects, self.registry, self.tenancy, lambda: self.config.external_url)
        self.tenancy.bootstrap()
        compute.bootstrap(self.objects, self.registry, self.tenancy)
        self.heartbeats = HeartbeatMonitor(self.objects, self.heartbeat_threshold)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        segments = [s for s in request.path.split("/") if s]
        identity = identity_of(request)
        if segments[:1] == ["clusters"] and len(segments) >= 2:
            return await self.serve(
                request, self._workspace_view(segments[1], identity), segments[2:], f"/clusters/{segments[1]}"
            )
        if segments[:2] == ["services", "apiexport"] and len(segments) >= 6 and segments[4] == "clusters":
            view = self._export_view(segments[2], segments[3], segments[5], identity)
            return await self.serve(request, view, segments[6:], "/" + "/".join(segments[:6]))
        if request.path in _OPEN_PATHS:
            return await self.serve(request, View(self.registry, None, identity), segments)
        raise errors.StatusError(
            404,
            "NotFound",
            "kcp serves workspaces under /clusters/<name or path>/ and virtual workspaces "
            "under /services/apiexport/<cluster>/<export>/clusters/<name or *>/",
        )

    def _workspace_view(self, target: str, identity: Identity) -> View:
        if target == "*":
            return WorkspaceView(self.registry, self.apis, None, identity)
        cluster = self.tenancy.resolve(target)
        if cluster is None:
            raise errors.forbidden(f'access to workspace "{target}" denied: it does not exist')
        return WorkspaceView(self.registry, self.apis, cluster, identity)

    def _export_view(self, export_cluster: str, export_name: str, target: str, identity: Identity) -> View:
        not_served = errors.StatusError(404, "NotFound", "the server could not find the requested resource")
        if ":" in export_cluster or ":" in target or export_cluster not in self.tenancy.clusters():
            raise not_served  # the virtual workspace takes logical-cluster names, never paths
        export = self.apis.export(export_cluster, export_name)
        if export is None or not export.get("status", {}).get("identityHash"):
            raise not_served
        if target != "*" and target not in self.tenancy.clusters():
            raise errors.forbidden(f'workspace "{target}" does not bind APIExport "{export_name}"')
        return ExportView(
            self.registry, self.apis, export_cluster, export, None if target == "*" else target, identity
        )
