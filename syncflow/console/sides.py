"""An object's source and copy, found with the engine's own code for the key's rule: the registry
entry's rule, the mode's endpoints (``syncflow.app.modes.rule_worker``) and the reconciler's reads
(``get_or_none`` of the source path, ``find_copy`` by the copy's sync labels). Each side's failure —
an unreachable cluster, a rule not ready — is a message on that side, and every request ends within
``READ_SECONDS``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from syncflow.console.models import DiffLine, Side
from syncflow.queue.keys import ObjectKey
from syncflow.sync.keys import RELATED, STATUS, SYNC
from syncflow.sync.reconciler import Sync, find_copy, get_or_none
from syncflow.sync.worker import RuleWorker
from syncflow.util.deadline import deadline
from syncflow.util.neterrors import describe

READ_SECONDS = 5.0
"""Time both sides' reads of one object may take together."""
OBJECT_VERBS = frozenset((SYNC, STATUS, RELATED))
"""Verbs whose keys name one source object of a registry rule."""
MAX_DIFF = 200
"""Differences shown at most."""

_DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def owned(obj: dict[str, Any]) -> dict[str, Any]:
    """What syncflow reads or writes of an object: its identity, labels, annotations, finalizers,
    spec and status (no managedFields or other bookkeeping)."""
    meta = obj.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _DROPPED_ANNOTATIONS}
    kept_meta = {
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "labels": meta.get("labels") or {},
        "annotations": annotations,
        "finalizers": meta.get("finalizers") or [],
        "resourceVersion": meta.get("resourceVersion"),
        "deletionTimestamp": meta.get("deletionTimestamp"),
    }
    shown = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": kept_meta}
    shown.update({k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")})
    return shown


def _leaves(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _leaves(v, f"{path}.{k}" if path else str(k), out)
    else:
        out[path] = value


def diff(source: dict[str, Any], copy: dict[str, Any]) -> list[DiffLine]:
    """The leaves that differ between the two objects outside their identity and metadata — the content
    the sync carries (spec, data, … down; status back) — by dotted path."""
    lines: list[DiffLine] = []
    parts = sorted((set(source) | set(copy)) - {"apiVersion", "kind", "metadata"})
    for part in parts:
        left: dict[str, Any] = {}
        right: dict[str, Any] = {}
        _leaves(source.get(part), part, left)
        _leaves(copy.get(part), part, right)
        for path in sorted(set(left) | set(right)):
            if left.get(path) != right.get(path):
                lines.append(DiffLine(path=path, source=left.get(path), copy_=right.get(path)))
    return lines[:MAX_DIFF]


NO_COPY = "no copy made by syncflow (an object it did not make is never shown as the copy)"
"""The copy side when the label search finds none: an object in the way is named by the last error."""


class Sides:
    """Reads the two sides of object keys with the mode's endpoints (built on first use, once)."""

    def __init__(self, worker: Callable[[], RuleWorker]) -> None:
        self._make = worker
        self._worker: RuleWorker | None = None
        self._lock = threading.Lock()

    def _rule_worker(self) -> RuleWorker:
        with self._lock:
            if self._worker is None:
                self._worker = self._make()
            return self._worker

    def read(self, key: ObjectKey) -> tuple[Side | None, Side | None, list[DiffLine]]:
        """Source and copy of ``key`` (None for a key that names no object) and their differences."""
        if key.verb not in OBJECT_VERBS:
            return None, None, []
        try:
            worker = self._rule_worker()
            entry = worker.registry.lookup(key.rule)
        except Exception as exc:  # no kubeconfig, Redis away: say so on both sides
            message = f"cannot resolve the rule's endpoints: {describe(exc)}"
            return Side(error=message), Side(error=message), []
        if entry.rule is None:
            message = f"rule {key.rule} is {entry.state}" + (f": {entry.reason}" if entry.reason else "")
            return Side(error=message), Side(error=message), []
        s = Sync(entry.rule, worker.endpoints, reach=worker.reach)
        with deadline(READ_SECONDS):
            source = self._side(
                entry.rule.source.endpoint,
                s.source_path(key),
                lambda: get_or_none(s.source(key), s.source_path(key)),
            )
            copy = self._side(entry.rule.target.endpoint, "", lambda: find_copy(s, key), NO_COPY)
        if copy.object is not None and not copy.path:
            meta = copy.object.get("metadata") or {}
            copy = copy.model_copy(
                update={
                    "path": entry.rule.target.resource.path(
                        meta.get("namespace") or "", meta.get("name") or ""
                    )
                }
            )
        differences = diff(source.object, copy.object) if source.object and copy.object else []
        return source, copy, differences

    @staticmethod
    def _side(
        endpoint: str, path: str, read: Callable[[], dict[str, Any] | None], missing: str = "not found"
    ) -> Side:
        try:
            found = read()
        except Exception as exc:  # unreachable cluster, 403, a timeout: a message, never a failed page
            return Side(endpoint=endpoint, path=path, error=describe(exc))
        if found is None:
            return Side(endpoint=endpoint, path=path, error=missing)
        return Side(endpoint=endpoint, path=path, object=owned(found))
