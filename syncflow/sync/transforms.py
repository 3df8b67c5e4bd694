"""A rule's transformations of the source object before it becomes the target copy (pure functions).

They run on a deep copy of the source object; the result is what the copy is built from *and* what
the last-applied state records, so a field a transformation drops is never deleted on the target.
Mutations (:class:`~syncflow.sync.rule.Mutate`) may read the other side's object: the existing copy,
or a preview of it. They raise :class:`~syncflow.mutation.base.MutationError` naming the step.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from syncflow.mutation.mutator import compiled
from syncflow.sync import filters
from syncflow.sync.metadata import KEEP_ANNOTATION
from syncflow.sync.rule import Annotate, DropAnnotations, DropFields, Mutate, SetFields, SyncRule, Transform
from syncflow.util.jsonvalues import deep_copy

Obj = dict[str, Any]

ALLOCATED_BY_CLUSTER: dict[str, DropFields] = {
    "services": DropFields(
        paths=("spec.clusterIP", "spec.clusterIPs", "spec.ports[].nodePort", "spec.healthCheckNodePort")
    ),
}
"""Fields each cluster allocates itself (by ``plural.group``): copying one cluster's values to another
would clash there."""


def _drop(node: Any, steps: list[str]) -> None:
    if not steps:
        return
    step, rest = steps[0], steps[1:]
    if step.endswith("[]"):
        items = node.get(step[:-2]) if isinstance(node, dict) else None
        for item in items if isinstance(items, list) else ():
            if rest:
                _drop(item, rest)
        return
    if not isinstance(node, dict) or step not in node:
        return
    if rest:
        _drop(node[step], rest)
    else:
        del node[step]


def set_field(obj: Obj, path: str, value: Any) -> None:
    """Set the field at dotted ``path`` in place, creating missing maps on the way."""
    node = obj
    *parents, last = path.split(".")
    for step in parents:
        child = node.get(step)
        if not isinstance(child, dict):
            child = node[step] = {}
        node = child
    node[last] = copy.deepcopy(value)


def drop_field(obj: Obj, path: str) -> None:
    """Remove the field at dotted ``path`` (``a.b[].c`` steps into every item of list ``b``) in place."""
    _drop(obj, path.split("."))


def apply(transforms: Iterable[Transform], source: Obj, other: Mapping[str, Any] | None = None) -> Obj:
    """A transformed deep copy of ``source``; ``other`` is the target object spec mutations may read."""
    out = deep_copy(source)
    for transform in transforms:
        meta = out.setdefault("metadata", {})
        if isinstance(transform, DropFields):
            for path in transform.paths:
                drop_field(out, path)
        elif isinstance(transform, DropAnnotations):
            annotations = meta.get("annotations") or {}
            meta["annotations"] = {
                key: value for key, value in annotations.items() if not key.startswith(transform.prefixes)
            }
        elif isinstance(transform, Annotate):
            meta["annotations"] = {**(meta.get("annotations") or {}), **transform.annotations}
        elif isinstance(transform, SetFields) and meta.get("name") == transform.name:
            for path, value in transform.fields.items():
                set_field(out, path, value)
        elif isinstance(transform, Mutate) and transform.spec:
            out = compiled("spec", transform.spec).apply(out, other)
    out.setdefault("metadata", {})
    return out


def of_rule(rule: SyncRule, source: Obj, other: Mapping[str, Any] | None = None) -> Obj:
    """``source`` after the rule's transforms (:func:`apply`), marked with ``KEEP_ANNOTATION`` when the
    rule's ``keep`` selects it (and unmarked when it does not, so the mark follows the rule)."""
    out = apply(rule.transforms, source, other)
    if rule.keep is None:
        return out
    annotations = dict(out["metadata"].get("annotations") or {})
    if filters.keeps(rule, source):
        annotations[KEEP_ANNOTATION] = "true"
    else:
        annotations.pop(KEEP_ANNOTATION, None)
    out["metadata"]["annotations"] = annotations
    return out


def mutate_status(transforms: Iterable[Transform], target: Obj, source: Mapping[str, Any]) -> Obj:
    """The target object with the rule's status mutations applied (``source``: the spec-mutated source
    object they may read), before its status returns to the source; ``target`` itself is left alone."""
    for transform in transforms:
        if isinstance(transform, Mutate) and transform.status:
            target = compiled("status", transform.status).apply(target, source)
    return target


def mutates_status(transforms: Iterable[Transform]) -> bool:
    """Whether the rule has status mutations (they may give a copy a status it does not have)."""
    return any(isinstance(t, Mutate) and t.status for t in transforms)


def timestamp_annotation(transforms: Iterable[Transform]) -> str | None:
    """The annotation a rule sets to the time of each write of the copy, if any."""
    return next((t.timestamp for t in transforms if isinstance(t, Annotate) and t.timestamp), None)
