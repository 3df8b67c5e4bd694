"""A SyncTarget as seed-style manifests write it (kcp v0.11's JSON field names)."""

from __future__ import annotations

from typing import Any

SEED_SYNC_TARGET: dict[str, Any] = {
    "apiVersion": "workload.kcp.io/v1alpha1",
    "kind": "SyncTarget",
    "metadata": {"name": "east"},
    "spec": {
        "workloadCluster": {"name": "east", "endpoint": "https://east.example:6443"},
        "supportedAPIExports": [{"export": "kubernetes", "resource": "apps/v1/deployments"}],
    },
}
