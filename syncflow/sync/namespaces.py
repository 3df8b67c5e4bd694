"""Namespaces on the target, created when a create into them finds them missing.

A create goes straight to its collection: into a namespace that exists, it costs no read of the
namespace, in any process, however many namespaces there are. A ``404`` from a namespaced create
(the namespace, or the resource, is not there) creates the namespace and sends the create once
more; a second ``404`` is the resource's and is raised. An agent that may not create namespaces
(``403``) gets the create's own ``404``, which names what is missing.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi

Obj = dict[str, Any]


def ensure_namespace(
    api: JsonApi, name: str, namespace_obj: Obj | None = None, labels: dict[str, str] | None = None
) -> None:
    """Create Namespace ``name`` (as ``namespace_obj`` if given, with ``labels`` added: e.g. the agent's,
    which says syncflow made it) unless it exists; never change it."""
    namespace = namespace_obj or {"metadata": {"name": name}}
    meta = {
        **namespace["metadata"],
        "labels": {**(namespace["metadata"].get("labels") or {}), **(labels or {})},
    }
    try:
        api.create(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", **namespace, "metadata": meta}
        )
    except ApiException as exc:
        if exc.status != 409:
            raise


def create_in(
    api: JsonApi,
    collection: str,
    namespace: str,
    body: Obj,
    namespace_obj: Obj | None = None,
    labels: dict[str, str] | None = None,
) -> Obj:
    """POST ``body`` to ``collection`` in ``namespace`` (none: cluster-scoped); a ``404`` ensures the
    namespace (as ``namespace_obj`` if given, with ``labels``) and creates once more."""
    try:
        return api.create(collection, body)
    except ApiException as exc:
        if exc.status != 404 or not namespace:
            raise
        missing = exc
    try:
        ensure_namespace(api, namespace, namespace_obj, labels)
    except ApiException as exc:
        if exc.status == 403:
            raise missing from exc
        raise
    return api.create(collection, body)
