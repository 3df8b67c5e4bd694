"""Workload manifests for tests of devcluster's simulated controllers."""

from __future__ import annotations

from typing import Any


def pod_template(app: str, *, restart: str = "Always", **spec: Any) -> dict[str, Any]:
    """A one-container pod template labelled ``app=<app>``."""
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"restartPolicy": restart, "containers": [{"name": "main", "image": "nginx:1.27"}], **spec},
    }


def workload(kind: str, name: str, replicas: int | None = 3, **spec: Any) -> dict[str, Any]:
    """An apps/v1 ``kind`` selecting ``app=<name>``; ``replicas`` None leaves the field out (DaemonSets)."""
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": pod_template(name), **spec},
    }
    if replicas is not None:
        body["spec"]["replicas"] = replicas
    return body


def status_field(obj: Any, field: str) -> Any:
    """``obj.status.<field>`` of an official-client model, None while the status is unset."""
    return getattr(obj.status, field, None)
