"""Kubernetes Events about source objects, so users see in kcp why their object is not synced."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi
from syncflow.logs import log_event

logger = logging.getLogger("syncflow.sync")

COMPONENT = "syncflow"


def record_event(api: JsonApi, obj: dict[str, Any], reason: str, message: str) -> None:
    """Create a Warning Event about ``obj`` (best effort: failing to record it is only logged)."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        # named like client-go's recorder: "<object>.<hex nanoseconds>" (a generateName cannot end in ".")
        "metadata": {"name": f"{meta.get('name', 'object')}.{time.time_ns():x}", "namespace": namespace},
        "involvedObject": {
            "apiVersion": obj.get("apiVersion", ""),
            "kind": obj.get("kind", ""),
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "uid": meta.get("uid", ""),
        },
        "reason": reason,
        "message": message[:1024],
        "type": "Warning",
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
    }
    try:
        api.create(f"/api/v1/namespaces/{namespace}/events", event)
    except ApiException as exc:
        log_event(logger, "sync.event_failed", level=logging.WARNING, reason=reason, status=exc.status)
