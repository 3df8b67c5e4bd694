"""Pod actions that are created but not stored: bindings (scheduling a Pod) and evictions."""

from __future__ import annotations

from typing import Any

from syncflow.devcluster import errors
from syncflow.devcluster.crud import Objects, Target
from syncflow.util.jsonvalues import deep_copy

Obj = dict[str, Any]
SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def bind(objects: Objects, pods: Target, namespace: str, name: str, binding: Any) -> Obj:
    """``pods/<name>/binding`` or ``bindings``: set the Pod's ``spec.nodeName`` to the target node."""
    target = binding.get("target") if isinstance(binding, dict) else None
    node = target.get("name") if isinstance(target, dict) else None
    if not node:
        raise errors.bad_request("Binding.target.name is required")
    pod = objects.get(pods, namespace, name)
    assigned = (pod.get("spec") or {}).get("nodeName")
    if assigned:
        raise errors.conflict("pods", name, "", f'pod {name} is already assigned to node "{assigned}"')
    bound = deep_copy(pod)
    bound["spec"]["nodeName"] = node
    objects.replace(pods, pod, bound)
    return SUCCESS


def evict(objects: Objects, pods: Target, namespace: str, name: str, eviction: Any) -> Obj:
    """``pods/<name>/eviction``: delete the Pod with the eviction's DeleteOptions (no PDB is checked)."""
    options = eviction.get("deleteOptions") if isinstance(eviction, dict) else None
    objects.delete(pods, namespace, name, options if isinstance(options, dict) else {})
    return SUCCESS
