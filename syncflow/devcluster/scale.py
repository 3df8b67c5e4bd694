"""The ``/scale`` subresource: an ``autoscaling/v1 Scale`` view of a resource's replica fields."""

from __future__ import annotations

from typing import Any

import orjson

from syncflow.devcluster import errors, patch
from syncflow.devcluster.crud import JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH
from syncflow.devcluster.resources import ScaleSubresource
from syncflow.devcluster.tables import json_path
from syncflow.util.jsonvalues import deep_copy

Obj = dict[str, Any]


def _selector_string(selector: Any) -> str:
    if isinstance(selector, str):
        return selector
    if isinstance(selector, dict):
        return ",".join(f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items()))
    return ""


def scale_of(spec: ScaleSubresource, obj: Obj) -> Obj:
    """The Scale object of ``obj``."""
    meta = obj["metadata"]
    status: Obj = {"replicas": json_path(obj, spec.status_replicas_path) or 0}
    if spec.label_selector_path:
        selector = json_path(obj, spec.label_selector_path)
        if selector is None and spec.label_selector_path == ".status.selector":
            selector = json_path(obj, ".spec.selector")
        if selector:
            status["selector"] = _selector_string(selector)
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": json_path(obj, spec.spec_replicas_path) or 0},
        "status": status,
    }


def patch_scale(current: Obj, content_type: str, body: bytes) -> Any:
    """Apply a patch to a Scale object."""
    try:
        document = orjson.loads(body)
        if content_type in (MERGE_PATCH, STRATEGIC_PATCH):
            return patch.merge_patch(current, document)
        if content_type == JSON_PATCH:
            return patch.json_patch(current, document)
    except (orjson.JSONDecodeError, patch.PatchError) as exc:
        raise errors.bad_request(f"error applying patch to scale: {exc}") from None
    raise errors.unsupported_media_type(f"the media type {content_type!r} is not a patch type")


def with_replicas(spec: ScaleSubresource, obj: Obj, scale: Any) -> Obj:
    """A copy of ``obj`` with the replica count the Scale body asks for."""
    replicas = (scale or {}).get("spec", {}).get("replicas") if isinstance(scale, dict) else None
    if not isinstance(replicas, int) or replicas < 0:
        raise errors.invalid(
            "Scale",
            obj["metadata"]["name"],
            [
                errors.FieldError(
                    "spec.replicas",
                    "FieldValueInvalid",
                    f"Invalid value: {replicas}: must be greater than or equal to 0",
                )
            ],
            "autoscaling",
        )
    wanted_rv = scale.get("metadata", {}).get("resourceVersion")
    if wanted_rv and wanted_rv != obj["metadata"]["resourceVersion"]:
        raise errors.conflict("scale", obj["metadata"]["name"])
    updated = deep_copy(obj)
    *parents, leaf = spec.spec_replicas_path.strip(".").split(".")
    target = updated
    for key in parents:
        target = target.setdefault(key, {})
    target[leaf] = replicas
    return updated
