"""kcp set-up the workload and edge demos share: nested workspaces, CRDs installed into a workspace, and
binding an APIExport."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kubernetes.client.exceptions import ApiException

from syncflow.api.install import install_crds
from syncflow.demo import launch
from syncflow.demo.launch import Devcluster
from syncflow.demo.manifests import Obj
from syncflow.demo.play import DemoRun
from syncflow.kube.clients import for_cluster, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.util.logs import log_event

logger = logging.getLogger(__name__)

WORKSPACES = "/apis/tenancy.kcp.io/v1alpha1/workspaces"
APIS = "/apis/apis.kcp.io/v1alpha1"


def fetch(api: JsonApi, path: str) -> Obj | None:
    """GET ``path``; None while it is not there (not found, or its type not served or allowed yet)."""
    try:
        return api.get(path)
    except ApiException as exc:
        if exc.status in (403, 404):
            return None
        raise


def start_clusters(run: DemoRun, cluster: str, label: str) -> tuple[Devcluster, Devcluster, JsonApi]:
    """Start a kcp devcluster and a plain one (``cluster``, described as ``label``); returns both and a
    client of kcp's root workspace."""
    kcp_dc = launch.start_devcluster(run.stack, "kcp", kcp=True)
    run.progress.done(f"kcp devcluster serving at {kcp_dc.url}")
    cluster_dc = launch.start_devcluster(run.stack, cluster, kcp=False)
    run.progress.done(f"{label} devcluster serving at {cluster_dc.url}")
    return kcp_dc, cluster_dc, JsonApi(load_client(str(kcp_dc.kubeconfig)))


def create_workspaces(root: JsonApi, path: str) -> JsonApi:
    """Create workspace ``path`` (``root:a:b``) and its parents as needed; return a client of it."""
    parent = "root"
    for name in path.split(":")[1:]:
        try:
            JsonApi(for_cluster(root.api, parent)).create(WORKSPACES, {"metadata": {"name": name}})
        except ApiException as exc:
            if exc.status != 409:
                raise
        parent = f"{parent}:{name}"
    return JsonApi(for_cluster(root.api, path))


def install(workspace: JsonApi, crds: Sequence[Obj], timeout: float) -> None:
    """Install ``crds`` into a workspace and wait until they are Established."""

    def echo(line: str) -> None:
        log_event(logger, "demo.crds", message=line)

    install_crds(workspace.api, crds, timeout=timeout, echo=echo)


def bind(run: DemoRun, workspace: JsonApi, path: str, export: str, served_path: str) -> None:
    """Bind APIExport ``path:export`` in ``workspace`` and wait until ``served_path`` answers there."""
    workspace.create(
        f"{APIS}/apibindings",
        {"metadata": {"name": export}, "spec": {"reference": {"export": {"path": path, "name": export}}}},
    )
    run.wait(lambda: workspace.exists(served_path), f"{served_path} served after binding {export}", [])
