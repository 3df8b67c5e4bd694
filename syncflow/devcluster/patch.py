"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch for built-in kinds.

Strategic merge follows kube-apiserver's server-side application of a patch (apimachinery's
``strategicpatch.StrategicMergeMapPatch``): lists with a ``patchMergeKey`` merge element by element,
lists of primitives with ``patchStrategy: merge`` merge as ordered sets, every other list is
replaced whole, maps merge recursively, ``null`` deletes a key. Directives: ``$patch``
(``replace``/``delete``/``merge``, on maps and as list elements), ``$retainKeys``,
``$setElementOrder/<list>`` and ``$deleteFromPrimitiveList/<list>``.

Differences from kube-apiserver: ``$patch: merge`` on a map is accepted as a no-op (kube rejects
it); the strategy tables cover the kinds :func:`builtin_patch_schema` lists, not every built-in
type; error messages are worded by us.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonpatch

PATCH = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder/"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/"


class PatchError(ValueError):
    """A patch that cannot be applied; the message is fit for a 400/422 answer."""


# --- RFC 7386 / RFC 6902 ---------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply a JSON merge patch (RFC 7386) and return the result; inputs are not mutated."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, operations: Any) -> Any:
    """Apply a JSON patch (RFC 6902, including ``test``); inputs are not mutated."""
    if not isinstance(operations, list):
        raise PatchError("json patch must be a list of operations")
    for op in operations:
        _check_pointers(op)
    try:
        return jsonpatch.JsonPatch(operations).apply(target, in_place=False)
    except jsonpatch.JsonPatchTestFailed as err:
        raise PatchError(f"the test operation failed: {err}") from None
    except jsonpatch.JsonPatchConflict as err:
        raise PatchError(f"the patch cannot be applied: {err}") from None
    except jsonpatch.JsonPointerException as err:
        raise PatchError(f"the patch cannot be applied: {err}") from None
    except (jsonpatch.InvalidJsonPatch, TypeError, KeyError, IndexError, ValueError) as err:
        raise PatchError(f"invalid json patch: {err}") from None


def _check_pointers(op: Any) -> None:
    if not isinstance(op, Mapping):
        raise PatchError(f"invalid json patch: operation {_show(op)} is not an object")
    for key in ("path", "from"):
        pointer = op.get(key)
        if pointer is not None and not (
            isinstance(pointer, str) and (pointer == "" or pointer.startswith("/"))
        ):
            raise PatchError(f"invalid json patch: {key} {_show(pointer)} is not a JSON pointer")


# --- strategy schema -------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldStrategy:
    """How one field patches: ``merge`` lists keep unmatched elements; ``merge_key`` pairs map elements."""

    merge: bool = False
    merge_key: str | None = None
    schema: PatchSchema | None = None


@dataclass(frozen=True)
class PatchSchema:
    """Per-field strategies of a map; fields not listed merge as plain maps or replace as lists."""

    fields: Mapping[str, FieldStrategy] = field(default_factory=dict)

    def strategy(self, name: str) -> FieldStrategy:
        """The strategy of ``name`` (the default when not listed)."""
        return self.fields.get(name, _PLAIN)

    def child(self, name: str) -> PatchSchema:
        """The schema of a map value or list element at ``name``."""
        return self.fields.get(name, _PLAIN).schema or _EMPTY


_EMPTY = PatchSchema()
_PLAIN = FieldStrategy()


def _obj(**fields: FieldStrategy | PatchSchema) -> PatchSchema:
    return PatchSchema(
        {k: v if isinstance(v, FieldStrategy) else FieldStrategy(schema=v) for k, v in fields.items()}
    )


def _keyed(key: str, item: PatchSchema | None = None) -> FieldStrategy:
    return FieldStrategy(merge=True, merge_key=key, schema=item)


_SET = FieldStrategy(merge=True)
_METADATA = _obj(finalizers=_SET, ownerReferences=_keyed("uid"))
_CONDITIONS = _obj(conditions=_keyed("type"))
_CONTAINER = _obj(
    ports=_keyed("containerPort"),
    env=_keyed("name"),
    volumeMounts=_keyed("mountPath"),
    volumeDevices=_keyed("devicePath"),
)
_POD_SPEC = _obj(
    containers=_keyed("name", _CONTAINER),
    initContainers=_keyed("name", _CONTAINER),
    ephemeralContainers=_keyed("name", _CONTAINER),
    volumes=_keyed("name"),
    imagePullSecrets=_keyed("name"),
    hostAliases=_keyed("ip"),
    topologySpreadConstraints=_keyed("topologyKey"),
    resourceClaims=_keyed("name"),
    schedulingGates=_keyed("name"),
)
_POD_TEMPLATE = _obj(metadata=_METADATA, spec=_POD_SPEC)
_WORKLOAD = _obj(metadata=_METADATA, spec=_obj(template=_POD_TEMPLATE), status=_CONDITIONS)

_BUILTIN: dict[tuple[str, str], PatchSchema] = {
    ("", "Pod"): _obj(
        metadata=_METADATA,
        spec=_POD_SPEC,
        status=_obj(conditions=_keyed("type"), podIPs=_keyed("ip"), hostIPs=_keyed("ip")),
    ),
    ("", "PodTemplate"): _obj(metadata=_METADATA, template=_POD_TEMPLATE),
    ("", "ReplicationController"): _WORKLOAD,
    ("", "Service"): _obj(metadata=_METADATA, spec=_obj(ports=_keyed("port")), status=_CONDITIONS),
    ("", "Namespace"): _obj(metadata=_METADATA, status=_CONDITIONS),
    ("", "ServiceAccount"): _obj(metadata=_METADATA, secrets=_keyed("name")),
    ("apps", "Deployment"): _WORKLOAD,
    ("apps", "ReplicaSet"): _WORKLOAD,
    ("apps", "StatefulSet"): _WORKLOAD,
    ("apps", "DaemonSet"): _WORKLOAD,
    ("batch", "Job"): _WORKLOAD,
    ("batch", "CronJob"): _obj(
        metadata=_METADATA, spec=_obj(jobTemplate=_obj(spec=_obj(template=_POD_TEMPLATE)))
    ),
}
_PLAIN_KINDS = [
    ("networking.k8s.io", "Ingress"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("", "Event"),
    ("events.k8s.io", "Event"),
    ("coordination.k8s.io", "Lease"),
    ("rbac.authorization.k8s.io", "Role"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
]
_BUILTIN.update({kind: _obj(metadata=_METADATA) for kind in _PLAIN_KINDS})


def builtin_patch_schema(group: str, kind: str) -> PatchSchema | None:
    """The strategic-merge schema of a built-in kind, or ``None`` (the server answers 415)."""
    return _BUILTIN.get((group, kind))


# --- strategic merge -------------------------------------------------------------------------


def strategic_merge_patch(
    original: Mapping[str, Any], patch: Mapping[str, Any], schema: PatchSchema
) -> dict[str, Any]:
    """Apply a strategic merge patch to ``original``; inputs are not mutated."""
    if not isinstance(patch, Mapping):
        raise PatchError("strategic merge patch must be a JSON object")
    return _merge_map(copy.deepcopy(dict(original)), patch, schema)


def _merge_map(original: dict[str, Any], patch: Mapping[str, Any], schema: PatchSchema) -> dict[str, Any]:
    """Merge ``patch`` into ``original`` (owned by the caller and modified in place)."""
    directive = patch.get(PATCH)
    if directive == "replace":
        return _merge_map({}, {k: v for k, v in patch.items() if k != PATCH}, schema)
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch type: {_show(directive)} in map: {_show(patch)}")
    _retain_keys(original, patch)
    live = {
        k: copy.deepcopy(original.get(k.removeprefix(SET_ELEMENT_ORDER)))
        for k in patch
        if k.startswith(SET_ELEMENT_ORDER)
    }
    for key, value in patch.items():
        if key.startswith("$"):
            _check_directive(key)
            if key.startswith(DELETE_FROM_PRIMITIVE_LIST):
                _delete_from_primitive_list(original, key.removeprefix(DELETE_FROM_PRIMITIVE_LIST), value)
            continue
        if value is None:
            original.pop(key, None)
        else:
            original[key] = _merge_value(original.get(key), value, schema.strategy(key))
    for key, before in live.items():
        name = key.removeprefix(SET_ELEMENT_ORDER)
        merge_key = schema.strategy(name).merge_key
        _set_element_order(
            original, name, patch[key], patch_list=patch.get(name), merge_key=merge_key, live=before
        )
    return original


def _check_directive(key: str) -> None:
    if key in (PATCH, RETAIN_KEYS):
        return
    for prefix in (SET_ELEMENT_ORDER, DELETE_FROM_PRIMITIVE_LIST):
        if key.startswith(prefix) and len(key) > len(prefix):
            return
    raise PatchError(f"unknown patch directive: {key}")


def _merge_value(original: Any, patch: Any, strategy: FieldStrategy) -> Any:
    schema = strategy.schema or _EMPTY
    if isinstance(patch, Mapping):
        base = original if isinstance(original, dict) else {}
        return _merge_map(base, patch, schema)
    if isinstance(patch, list):
        base_list = original if isinstance(original, list) else []
        return _merge_list(base_list, patch, strategy)
    return copy.deepcopy(patch)


def _clean(value: Any, schema: PatchSchema) -> Any:
    """A patch value applied to nothing: directives and nulls are resolved away."""
    if isinstance(value, Mapping):
        return _merge_map({}, {k: v for k, v in value.items() if k != PATCH}, schema)
    if isinstance(value, list):
        return _merge_list([], value, _PLAIN)
    return copy.deepcopy(value)


def _retain_keys(original: dict[str, Any], patch: Mapping[str, Any]) -> None:
    retain = patch.get(RETAIN_KEYS)
    if retain is None:
        return
    if not isinstance(retain, list):
        raise PatchError(f"{RETAIN_KEYS} must be a list, got {_show(retain)}")
    for key in patch:
        if not key.startswith("$") and key not in retain:
            raise PatchError(f"{key} is not present in the {RETAIN_KEYS} list: {_show(retain)}")
    for key in [k for k in original if k not in retain]:
        del original[key]


def _merge_list(original: list[Any], patch: list[Any], strategy: FieldStrategy) -> list[Any]:
    item_schema = strategy.schema or _EMPTY
    replace = [
        i for i, item in enumerate(patch) if isinstance(item, Mapping) and item.get(PATCH) == "replace"
    ]
    if replace:
        rest = [item for i, item in enumerate(patch) if i not in replace]
        return [_clean(item, item_schema) for item in rest]
    if not strategy.merge:
        return [_clean(item, item_schema) for item in patch]
    if strategy.merge_key is None:
        return _merge_primitives(original, patch)
    return _merge_keyed(original, patch, strategy.merge_key, item_schema)


def _merge_primitives(original: list[Any], patch: list[Any]) -> list[Any]:
    merged = list(original)
    for item in patch:
        if isinstance(item, Mapping | list):
            raise PatchError(f"a list merged as a set must hold primitives, got {_show(item)}")
        if item not in merged:
            merged.append(item)
    return merged


def _merge_keyed(original: list[Any], patch: list[Any], key: str, schema: PatchSchema) -> list[Any]:
    merged = list(original)
    for item in patch:
        if not isinstance(item, Mapping):
            raise PatchError(f"a list merged by {key!r} must hold objects, got {_show(item)}")
        if key not in item:
            raise PatchError(f"map: {_show(item)} does not contain declared merge key: {key}")
        directive = item.get(PATCH)
        index = next(
            (i for i, old in enumerate(merged) if isinstance(old, Mapping) and old.get(key) == item[key]), -1
        )
        if directive == "delete":
            merged = [old for old in merged if not (isinstance(old, Mapping) and old.get(key) == item[key])]
        elif index >= 0:
            merged[index] = _merge_map(merged[index], item, schema)
        else:
            merged.append(_merge_map({}, item, schema))
    return merged


def _delete_from_primitive_list(original: dict[str, Any], name: str, values: Any) -> None:
    if not isinstance(values, list):
        raise PatchError(f"{DELETE_FROM_PRIMITIVE_LIST}{name} must be a list, got {_show(values)}")
    current = original.get(name)
    if isinstance(current, list):
        original[name] = [item for item in current if item not in values]


def _set_element_order(
    merged_parent: dict[str, Any], name: str, order: Any, *, patch_list: Any, merge_key: str | None, live: Any
) -> None:
    """Reorder ``merged_parent[name]`` as kube does.

    Elements named in the directive take its order; the others (present only on the server) keep
    their place relative to the live list ``live``, the value before the patch.
    """
    if not isinstance(order, list):
        raise PatchError(f"{SET_ELEMENT_ORDER}{name} must be a list, got {_show(order)}")
    merged = merged_parent.get(name)
    if not isinstance(merged, list):
        return
    live = live if isinstance(live, list) else []
    identity = _identity(merge_key)
    order_ids = [identity(item) for item in order]
    _check_patch_order(patch_list, order_ids, identity)
    in_order = sorted(
        (i for i in merged if identity(i) in order_ids), key=lambda i: order_ids.index(identity(i))
    )
    server_only = [i for i in merged if identity(i) not in order_ids]
    merged_parent[name] = _interleave(server_only, in_order, [identity(i) for i in live], identity)


def _identity(key: str | None) -> Callable[[Any], str]:
    if key is None:
        return lambda item: json.dumps(item, sort_keys=True)
    return lambda item: json.dumps(item.get(key) if isinstance(item, Mapping) else item, sort_keys=True)


def _check_patch_order(patch_list: Any, order_ids: list[str], identity: Callable[[Any], str]) -> None:
    if not isinstance(patch_list, list):
        return
    ids = [identity(i) for i in patch_list if not (isinstance(i, Mapping) and PATCH in i)]
    positions = [order_ids.index(i) if i in order_ids else -1 for i in ids]
    if -1 in positions or positions != sorted(positions):
        raise PatchError(f"the order in patch list: {_show(patch_list)} doesn't match $setElementOrder list")


def _interleave(
    server_only: list[Any], in_order: list[Any], live_ids: list[str], identity: Callable[[Any], str]
) -> list[Any]:
    """Merge two sorted runs; a server-only element goes first when it came first in the live list."""
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(in_order):
        if j >= len(in_order):
            out.append(server_only[i])
            i += 1
            continue
        if i < len(server_only):
            left, right = identity(server_only[i]), identity(in_order[j])
            if left in live_ids and right in live_ids and live_ids.index(left) < live_ids.index(right):
                out.append(server_only[i])
                i += 1
                continue
        out.append(in_order[j])
        j += 1
    return out


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
