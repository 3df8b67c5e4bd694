"""Kubernetes Events about source objects, so users see in kcp why their object is not synced."""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.sync")

COMPONENT = "syncflow"
MESSAGE_LIMIT = 1024
NAME_PREFIX_LIMIT = 200
"""Characters of the object's name in an Event's name (``<name>.<16 hex digits>`` stays a valid name)."""


def record_event(api: JsonApi, obj: dict[str, Any], reason: str, message: str) -> None:
    """Record a Warning Event about ``obj`` (best effort: failing to record it is only logged). The same
    reason and message about the same object again counts up one Event (``count``, ``lastTimestamp``),
    as client-go's recorder does, so a retried refusal never floods the namespace."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    message = message[:MESSAGE_LIMIT]
    digest = hashlib.sha256(f"{meta.get('uid', '')}\0{reason}\0{message}".encode()).hexdigest()[:16]
    name = f"{str(meta.get('name', 'object'))[:NAME_PREFIX_LIMIT]}.{digest}"
    path = f"/api/v1/namespaces/{namespace}/events"
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {
            "apiVersion": obj.get("apiVersion", ""),
            "kind": obj.get("kind", ""),
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "uid": meta.get("uid", ""),
        },
        "reason": reason,
        "message": message,
        "type": "Warning",
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
    }
    try:
        try:
            api.create(path, event)
        except ApiException as exc:
            if exc.status != 409:
                raise
            existing = api.get(f"{path}/{name}")
            count = int(existing.get("count") or 1) + 1
            api.merge_patch(f"{path}/{name}", {"count": count, "lastTimestamp": now})
    except ApiException as exc:
        log_event(logger, "sync.event_failed", level=logging.WARNING, reason=reason, status=exc.status)
