"""PublishedResource ``spec.filter``: which kcp objects are synced."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncflow.selectors import LabelSelector


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    labels: Mapping[str, str] = (obj.get("metadata") or {}).get("labels") or {}
    return labels


def matches_filter(
    spec_filter: Mapping[str, Any] | None, obj: Mapping[str, Any], namespace_obj: Mapping[str, Any] | None
) -> bool:
    """Whether kcp object ``obj`` passes ``spec.filter`` (``{"namespace": sel, "resource": sel}``).

    ``resource`` is matched against the object's labels; ``namespace`` against the labels of the kcp
    Namespace object ``namespace_obj``, and only for namespaced objects. A non-empty namespace selector
    with no Namespace object does not match. Missing or empty selectors match everything.
    """
    spec_filter = spec_filter or {}
    if not LabelSelector.from_dict(spec_filter.get("resource")).matches(_labels(obj)):
        return False
    namespace_selector = LabelSelector.from_dict(spec_filter.get("namespace"))
    if namespace_selector.empty or not (obj.get("metadata") or {}).get("namespace"):
        return True
    return namespace_obj is not None and namespace_selector.matches(_labels(namespace_obj))
