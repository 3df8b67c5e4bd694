"""Rendering the chart with Helm's own engine (helm-python-sdk embeds Helm's Go SDK) and reading the
objects back, for the chart's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.processes import REPO

helm = pytest.importorskip("helm_python", reason="helm-python-sdk (Helm's engine) is not installed")

CHART = REPO / "charts" / "syncflow"
RELEASE, NAMESPACE = "agent", "sync"
FULLNAME = f"{RELEASE}-syncflow"
REQUIRED = {"apiExportEndpointSliceName": "my-export", "kcpKubeconfig": "kcp-kubeconfig"}
KUBE_VERSIONS = ("1.25.0", "1.32.0")


def render(values: dict[str, Any], chart_dir: Path = CHART) -> list[dict[str, Any]]:
    """``helm template`` of ``chart_dir`` with schema validation: every rendered object."""
    chart = helm.Chart.load(chart_dir)
    chart.validate_schema(values)
    manifests = chart.render(values, name=RELEASE, namespace=NAMESPACE, is_install=True)
    return [
        doc
        for path, text in sorted(manifests.items())
        if not path.endswith("NOTES.txt")
        for doc in yaml.safe_load_all(text)
        if doc
    ]


def by_kind(objects: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Objects by (kind, name)."""
    return {(o["kind"], o["metadata"]["name"]): o for o in objects}


def container(objects: list[dict[str, Any]], component: str) -> dict[str, Any]:
    """The container of the release's Deployment of ``component``."""
    deployment = by_kind(objects)[("Deployment", f"{FULLNAME}-{component}")]
    [first] = deployment["spec"]["template"]["spec"]["containers"]
    return dict(first)


def env(objects: list[dict[str, Any]], component: str) -> dict[str, Any]:
    """That container's environment: name to value (or ``valueFrom``)."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container(objects, component)["env"]}


def containers(objects: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every container of every Deployment, with the Deployment's name."""
    for obj in objects:
        if obj["kind"] == "Deployment":
            for c in obj["spec"]["template"]["spec"]["containers"]:
                yield obj["metadata"]["name"], c
