"""Test support for kcp workspaces: serving the workload types the way kcp v0.11 did."""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi
from tests.support.waiting import wait_for

APIS = "/apis/apis.kcp.io/v1alpha1"


def served(api: JsonApi, path: str) -> bool:
    """Whether GET ``path`` answers (a discovery document or an object)."""
    try:
        api.get(path)
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def bind_compute(workspace: JsonApi) -> None:
    """Bind root:compute's ``kubernetes`` export when the workspace does not serve apps/v1 on its own."""
    if served(workspace, "/apis/apps/v1") or served(workspace, f"{APIS}/apibindings/kubernetes"):
        return
    workspace.create(
        f"{APIS}/apibindings",
        {
            "metadata": {"name": "kubernetes"},
            "spec": {"reference": {"export": {"path": "root:compute", "name": "kubernetes"}}},
        },
    )
    wait_for(
        lambda: served(workspace, "/apis/apps/v1"), timeout=30, what="apps/v1 served after binding kubernetes"
    )
