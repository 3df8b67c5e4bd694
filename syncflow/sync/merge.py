"""Three-way JSON merge patch (RFC 7386) from the last-applied state, as api-syncagent updates copies.

Compared are the *managed views* of the objects: every top-level key except apiVersion, kind,
metadata and the subresources (status, scale), plus metadata.labels and metadata.annotations.
Names, GVKs and other metadata are never patched, so last-applied may be the kcp-side state
(api-syncagent's format) while ``desired`` is the local object from ``build_desired``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncflow.sync import metadata as md
from syncflow.sync.desired import user_annotations, user_labels

_UNMANAGED_TOP_LEVEL = frozenset({"apiVersion", "kind", "metadata", *md.SUBRESOURCE_KEYS})
_ABSENT = object()


def three_way_patch(
    last_applied: Mapping[str, Any] | None,
    desired: Mapping[str, Any],
    live: Mapping[str, Any],
    *,
    revert: bool = False,
) -> dict[str, Any] | None:
    """The merge patch that brings ``live`` in line with ``desired``; None when nothing changes.

    With ``last_applied``: fields kcp changed since then are set, fields kcp removed are deleted,
    everything else on ``live`` (local edits, fields of other controllers) is kept; with ``revert``, a
    local edit of a field kcp sets is undone too (fields only ``live`` has still survive). Sync labels
    and annotations of ``desired`` that are missing or wrong on ``live`` are set again. Without it (no
    state yet): every managed top-level field of ``desired`` replaces live's, labels and annotations
    are merged into live's. ``status`` is never touched; lists are replaced whole.
    """
    want = _view(desired, user_only=False)
    meta = live.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    current = {**live, "metadata": {**meta, "labels": labels, "annotations": annotations}}
    if last_applied is None:
        patch = _full_update(want, current)
    else:
        patch = _diff(_view(last_applied, user_only=True), want, current, revert)
    return patch or None


def managed_view(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a sync writes of a copy: every top-level field but the subresources, plus its labels and
    annotations (a change of anything else, e.g. its status, never needs a sync)."""
    return _view(obj, user_only=False)


def carries(live: Mapping[str, Any], last_applied: Mapping[str, Any]) -> bool:
    """Whether copy ``live`` still holds every field of ``last_applied`` (what kcp set), as a sync that
    reverts local edits would leave it."""
    return _carries(_view(live, user_only=False), _view(last_applied, user_only=True))


def _view(obj: Mapping[str, Any], *, user_only: bool) -> dict[str, Any]:
    """The managed fields of ``obj``, without nulls; ``user_only`` drops sync and excluded metadata."""
    view = {key: value for key, value in obj.items() if key not in _UNMANAGED_TOP_LEVEL}
    meta = obj.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    if user_only:
        labels, annotations = user_labels(labels), user_annotations(annotations)
    view["metadata"] = {"labels": labels, "annotations": annotations}
    return _without_nulls(view)


def _without_nulls(value: Mapping[str, Any]) -> dict[str, Any]:
    """A copy without None values in maps (a null cannot be set by a merge patch)."""
    return {
        key: _without_nulls(item) if isinstance(item, Mapping) else item
        for key, item in value.items()
        if item is not None
    }


def _diff(
    last: Mapping[str, Any], want: Mapping[str, Any], live: Mapping[str, Any], revert: bool = False
) -> dict[str, Any]:
    """Set what changed from ``last`` to ``want`` unless ``live`` has it (with ``revert``, also what kcp
    did not change but ``live`` no longer carries); null what ``want`` dropped."""
    patch: dict[str, Any] = {}
    for key, value in want.items():
        old, cur = last.get(key, _ABSENT), live.get(key, _ABSENT)
        if old == value and not revert:
            continue  # kcp did not change it: a local edit survives
        if isinstance(value, Mapping) and isinstance(cur, Mapping):
            if sub := _diff(old if isinstance(old, Mapping) else {}, value, cur, revert):
                patch[key] = sub
        elif cur != value and not (old == value and _carries(cur, value)):
            patch[key] = value
    for key in last:
        if key not in want and key in live:
            patch[key] = None
    return patch


def _carries(live: Any, want: Any) -> bool:
    """Whether ``live`` holds every value of ``want``: a map may have more keys (defaults the server or a
    controller added), a list as many items, each carrying its counterpart; a null is carried by absence."""
    if isinstance(want, Mapping):
        return isinstance(live, Mapping) and all(_carries(live.get(k), v) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(live, list) and len(live) == len(want) and all(map(_carries, live, want))
    return bool(live == want)


def _full_update(want: Mapping[str, Any], live: Mapping[str, Any]) -> dict[str, Any]:
    """api-syncagent's update without state: replace top-level fields, merge labels and annotations."""
    patch: dict[str, Any] = {}
    for key, value in want.items():
        cur = live.get(key, _ABSENT)
        if key == "metadata":
            if sub := _diff({}, value, cur):
                patch[key] = sub
        elif cur != value:
            patch[key] = _replacement(cur, value)
    return patch


def _replacement(cur: Any, value: Any) -> Any:
    """The merge-patch value that turns ``cur`` into exactly ``value`` (``value`` has no nulls)."""
    if not (isinstance(value, Mapping) and isinstance(cur, Mapping)):
        return value
    patch: dict[str, Any] = {key: None for key in cur if key not in value}
    for key, item in value.items():
        if cur.get(key, _ABSENT) != item:
            patch[key] = _replacement(cur.get(key, _ABSENT), item)
    return patch
