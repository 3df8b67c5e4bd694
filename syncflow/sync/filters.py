"""Which source objects a rule syncs: its ``Selector`` (labels, annotations, fields, namespaces, names)."""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from syncflow.selectors import FieldSelector, LabelSelector
from syncflow.sync.rule import Selector


@functools.lru_cache(maxsize=1024)
def _labels(text: str) -> LabelSelector:
    return LabelSelector.parse(text)


class _EveryField(Collection[str]):
    """Rules may select on any field of an object (an API server supports only a few)."""

    def __contains__(self, item: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


@functools.lru_cache(maxsize=256)
def _fields(text: str) -> FieldSelector:
    return FieldSelector.parse(text, supported=_EveryField())


def _meta(obj: Mapping[str, Any], field: str) -> Mapping[str, str]:
    value: Mapping[str, str] = (obj.get("metadata") or {}).get(field) or {}
    return value


def needs_namespace(selector: Selector, obj: Mapping[str, Any]) -> bool:
    """Whether matching ``obj`` needs its source Namespace object (a namespace label selector)."""
    return bool(selector.namespace_labels and (obj.get("metadata") or {}).get("namespace"))


def matches(
    selector: Selector, obj: Mapping[str, Any], namespace_obj: Mapping[str, Any] | None = None
) -> bool:
    """Whether source object ``obj`` is selected.

    The namespace label selector applies to namespaced objects only, against the labels of their
    Namespace ``namespace_obj``; a non-empty one with no Namespace object does not match.
    """
    meta = obj.get("metadata") or {}
    if selector.namespaces and meta.get("namespace", "") not in selector.namespaces:
        return False
    if selector.names and meta.get("name", "") not in selector.names:
        return False
    if not _labels(selector.labels).matches(_meta(obj, "labels")):
        return False
    if not _labels(selector.annotations).matches(_meta(obj, "annotations")):
        return False
    if selector.fields and not _fields(selector.fields).matches(obj):
        return False
    if not needs_namespace(selector, obj):
        return True
    return namespace_obj is not None and _labels(selector.namespace_labels).matches(
        _meta(namespace_obj, "labels")
    )
