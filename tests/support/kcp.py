"""Test support for kcp workspaces: kubectl in a workspace by path, and serving the workload types the
way kcp v0.11 did."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import yaml

from syncflow.kube.jsonapi import JsonApi
from tests.support.devcluster import Kubectl
from tests.support.waiting import wait_for

APIS = "/apis/apis.kcp.io/v1alpha1"


def bind_compute(workspace: JsonApi) -> None:
    """Bind root:compute's ``kubernetes`` export (Deployments, Services, ...), as kcp v0.11's workload
    workspaces did; no-op when bound already."""
    if workspace.exists(f"{APIS}/apibindings/kubernetes"):
        return
    workspace.create(
        f"{APIS}/apibindings",
        {
            "metadata": {"name": "kubernetes"},
            "spec": {"reference": {"export": {"path": "root:compute", "name": "kubernetes"}}},
        },
    )
    wait_for(
        lambda: workspace.exists("/apis/apps/v1"), timeout=30, what="apps/v1 served after binding kubernetes"
    )


def in_workspace(
    kubectl: Kubectl, workspace: str, *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run kubectl in ``workspace`` (a logical-cluster name or path such as ``root:org``)."""
    server = yaml.safe_load(kubectl.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
    base = server.rsplit("/clusters/", 1)[0]
    return kubectl.run("--server", f"{base}/clusters/{workspace}", *args, stdin=stdin, check=check)


def create_in(kubectl: Kubectl, workspace: str, obj: Any) -> None:
    """``kubectl create -f -`` of one object in a workspace."""
    in_workspace(kubectl, workspace, "create", "-f", "-", stdin=json.dumps(obj))


def workspace_manifest(name: str) -> str:
    """A ``tenancy.kcp.io/v1alpha1`` Workspace as JSON."""
    return json.dumps(
        {"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": {"name": name}}
    )
