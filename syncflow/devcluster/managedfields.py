"""``metadata.managedFields``: which manager owns which fields, kept as kube-apiserver keeps them.

Every write names a field manager (``?fieldManager=``, else the client's User-Agent up to its first
``/``, as kube derives it). Non-apply writes (create, update, patch) record an ``Update`` entry per
manager (and subresource) holding the fields that write set or changed; those fields leave every
other entry, and fields a write removed leave every entry. Server-side apply keeps the ``Apply``
entry of its manager (see :mod:`syncflow.devcluster.serverside`). Fields are tracked per status
scope: writes to the main resource of a type with a status subresource do not own ``status``, and
``/status`` writes own only ``status``. The server-set parts of ``metadata`` (name, namespace, uid,
resourceVersion, generation, timestamps, managedFields) are never owned.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from syncflow.devcluster import fieldpaths
from syncflow.devcluster.fieldpaths import FieldSet, Path
from syncflow.devcluster.shapes import MAP, SET, Shape

APPLY, UPDATE = "Apply", "Update"
MAX_MANAGER_LENGTH = 128
_UNOWNED_META = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)
MISSING: Any = object()


def default_manager(user_agent: str) -> str:
    """kube's manager name for a write without ``fieldManager``: the User-Agent up to its first ``/``."""
    return user_agent.split("/", maxsplit=1)[0][:MAX_MANAGER_LENGTH]


def now() -> str:
    """The time of an entry, as kube writes it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ----- field sets of objects -----------------------------------------------------------------


def scoped(obj: dict[str, Any], status_subresource: bool, subresource: str) -> dict[str, Any]:
    """The part of an object a write in this scope may own (no apiVersion, kind or server metadata)."""
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _UNOWNED_META}
    if meta:
        body["metadata"] = meta
    else:
        body.pop("metadata", None)
    if subresource == "status":
        return {"status": body["status"]} if "status" in body else {}
    if status_subresource:
        body.pop("status", None)
    return body


def fields_of(value: Any, shape: Shape) -> FieldSet:
    """Every member path of a value: leaves, set elements and associative-list items."""
    return fieldpaths.from_fields_v1(fields_tree(value, shape))


def fields_tree(value: Any, shape: Shape) -> dict[str, Any]:
    """The FieldsV1 tree of every field of ``value`` (its own membership is for the caller to mark)."""
    if isinstance(value, dict):
        return {
            "f:" + name: fields_tree(child, shape.field(name)) if isinstance(child, dict | list) else {}
            for name, child in sorted(value.items())
        }
    if isinstance(value, list) and value:
        if shape.list_type == SET and all(not isinstance(v, dict | list) for v in value):
            return {element: {} for element in sorted(fieldpaths.value(v) for v in value)}
        keys = shape.keys
        if shape.list_type == MAP and keys and all(isinstance(v, dict) for v in value):
            item_shape = shape.item()
            items = {fieldpaths.key(item, keys): item for item in value}
            return {
                element: {".": {}, **fields_tree(items[element], item_shape)} for element in sorted(items)
            }
    return {}


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path``, or :data:`MISSING`."""
    current = obj
    for element in path:
        kind, text = element[:2], element[2:]
        if kind == "f:":
            if not isinstance(current, dict) or text not in current:
                return MISSING
            current = current[text]
        elif kind in ("k:", "v:"):
            if not isinstance(current, list):
                return MISSING
            current = next((item for item in current if _element(item, kind, text) == element), MISSING)
            if current is MISSING:
                return MISSING
        else:
            return MISSING
    return current


def _element(item: Any, kind: str, text: str) -> str:
    if kind == "v:":
        return fieldpaths.value(item)
    if not isinstance(item, dict):
        return ""
    wanted = fieldpaths.from_key(text)
    return fieldpaths.key(item, wanted) if all(k in item for k in wanted) else ""


def remove_at(obj: Any, path: Path) -> None:
    """Delete the value at ``path`` from ``obj`` (in place), if it is there."""
    if not path:
        return
    parent = value_at(obj, path[:-1])
    kind, text = path[-1][:2], path[-1][2:]
    if kind == "f:" and isinstance(parent, dict):
        parent.pop(text, None)
    elif kind in ("k:", "v:") and isinstance(parent, list):
        parent[:] = [item for item in parent if _element(item, kind, text) != path[-1]]


def changed_paths(old: Any, new: Any, shape: Shape) -> tuple[FieldSet, FieldSet]:
    """(paths set or changed by going from ``old`` to ``new``, paths removed)."""
    before, after = fields_of(old, shape), fields_of(new, shape)
    changed = {
        p for p in after if p not in before or (not is_element(p) and value_at(old, p) != value_at(new, p))
    }
    return changed, before - after


def is_element(path: Path) -> bool:
    """Whether ``path`` names a list item or set element (which is added or removed, never changed)."""
    return bool(path) and path[-1].startswith(("k:", "v:"))


def prune_empty(obj: Any, path: Path) -> None:
    """After removing ``path``, drop the maps above it that it left empty (never ``metadata``)."""
    for end in range(len(path) - 1, 0, -1):
        parent = value_at(obj, path[:end])
        if isinstance(parent, dict) and not parent and path[:end] != ("f:metadata",):
            remove_at(obj, path[:end])
        else:
            return


# ----- entries -------------------------------------------------------------------------------


@dataclass
class Entry:
    """One ``managedFields`` entry."""

    manager: str
    operation: str
    api_version: str
    time: str
    fields: FieldSet = field(default_factory=set)
    subresource: str = ""

    def to_json(self) -> dict[str, Any]:
        """The entry as stored, in kube's field order."""
        tree = fieldpaths.to_fields_v1(self.fields)
        return _entry_json(self.manager, self.operation, self.api_version, self.time, tree, self.subresource)


def _entry_json(
    manager: str, operation: str, api_version: str, time: str, tree: dict[str, Any], subresource: str
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": tree,
    }
    if subresource:
        out["subresource"] = subresource
    return out


def read(meta: dict[str, Any]) -> list[Entry]:
    """The entries of an object's metadata."""
    entries = []
    for raw in meta.get("managedFields") or []:
        if not isinstance(raw, dict) or not raw.get("manager"):
            continue
        entries.append(
            Entry(
                str(raw["manager"]),
                str(raw.get("operation", UPDATE)),
                str(raw.get("apiVersion", "")),
                str(raw.get("time", "")),
                fieldpaths.from_fields_v1(raw.get("fieldsV1") or {}),
                str(raw.get("subresource", "")),
            )
        )
    return entries


def write(entries: list[Entry]) -> list[dict[str, Any]]:
    """Stored form of the entries that still own something."""
    return [e.to_json() for e in entries if e.fields]


def find(entries: list[Entry], manager: str, operation: str, subresource: str) -> Entry | None:
    """The entry of one manager, operation and subresource."""
    return next(
        (e for e in entries if (e.manager, e.operation, e.subresource) == (manager, operation, subresource)),
        None,
    )


def others(entries: list[Entry], mine: Entry | None) -> Iterator[Entry]:
    """Every entry but ``mine``."""
    return (e for e in entries if e is not mine)


@dataclass(frozen=True)
class Tracking:
    """How one write updates managedFields: its manager, subresource, the type's shape and version."""

    manager: str
    shape: Shape
    api_version: str
    status_subresource: bool
    subresource: str = ""

    def updated(self, old: dict[str, Any] | None, new: dict[str, Any]) -> list[dict[str, Any]]:
        """managedFields after a non-apply write (create when ``old`` is None) by this manager."""
        sent = new["metadata"].get("managedFields")
        if sent == [{}]:
            return []  # kube's way of clearing managedFields
        after = scoped(new, self.status_subresource, self.subresource)
        if old is None:  # a create owns everything it sets
            tree = fields_tree(after, self.shape)
            time = new["metadata"].get("creationTimestamp") or now()
            return (
                [_entry_json(self.manager, UPDATE, self.api_version, time, tree, self.subresource)]
                if tree
                else []
            )
        entries = read(old["metadata"])
        before = scoped(old, self.status_subresource, self.subresource)
        changed, removed = changed_paths(before, after, self.shape)
        for entry in entries:
            entry.fields -= changed | removed
        mine = find(entries, self.manager, UPDATE, self.subresource)
        if mine is None and changed:
            mine = Entry(self.manager, UPDATE, self.api_version, now(), subresource=self.subresource)
            entries.append(mine)
        if mine is not None and changed:
            mine.fields |= changed
            mine.api_version, mine.time = self.api_version, now()
        return write(entries)
