"""Server-side apply (``application/apply-patch+yaml``): merge a manager's configuration into the live object.

A simplified structured-merge-diff, as kube-apiserver runs it:

- The applied configuration is merged into the live object: maps merge field by field, associative
  lists (see :mod:`syncflow.devcluster.shapes`) merge item by item on their keys, sets by value,
  every other list and every scalar takes the applied value.
- Conflicts: a field the configuration sets to a value other than the live one, while another
  manager (another Apply manager, or any Update entry, including this manager's own) owns it, is
  a ``409`` listing each such field and its manager, unless ``force=true``, which takes the
  fields away from them. Setting a field to the value it already has shares its ownership.
- A field this manager applied before and no longer applies is removed from the object, unless
  another manager still owns it (or something below it).
- The manager's ``Apply`` entry then holds exactly the fields of its configuration.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import yaml

from syncflow.devcluster import errors, fieldpaths
from syncflow.devcluster.errors import StatusError
from syncflow.devcluster.fieldpaths import Path
from syncflow.devcluster.managedfields import (
    APPLY,
    MISSING,
    UPDATE,
    Entry,
    Tracking,
    fields_of,
    find,
    is_element,
    now,
    others,
    prune_empty,
    read,
    remove_at,
    scoped,
    value_at,
    write,
)
from syncflow.devcluster.shapes import MAP, SET, Shape


def decode(body: bytes, api_version: str, kind: str, name: str) -> dict[str, Any]:
    """The applied configuration of a request body (YAML or JSON), checked as kube checks it."""
    try:
        config = orjson.loads(body)
    except orjson.JSONDecodeError:
        try:
            config = yaml.safe_load(body)
        except yaml.YAMLError as exc:
            raise errors.bad_request(f"error decoding YAML: {exc}") from None
    if not isinstance(config, dict):
        raise errors.bad_request("the applied configuration must be an object")
    if not config.get("kind"):
        raise errors.bad_request(f"Object 'Kind' is missing in '{orjson.dumps(config).decode()[:200]}'")
    if config.get("apiVersion") != api_version or config.get("kind") != kind:
        raise errors.bad_request(
            f"the API version ({config.get('apiVersion')}) and kind ({config.get('kind')}) of the applied "
            f"configuration do not match the request ({api_version}, {kind})"
        )
    meta = config.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    meta = meta or {}
    if meta.get("managedFields"):
        raise errors.bad_request("metadata.managedFields must be nil")
    if meta.get("name", name) != name:
        raise errors.bad_request(
            f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
        )
    return config


def merge(live: Any, applied: Any, shape: Shape) -> Any:
    """``applied`` merged into ``live`` (neither is modified)."""
    if isinstance(applied, dict) and isinstance(live, dict):
        out = dict(live)
        for name, value in applied.items():
            if value is None:
                out.pop(name, None)
            else:
                out[name] = merge(live.get(name, MISSING), value, shape.field(name))
        return out
    if isinstance(applied, list) and isinstance(live, list):
        if shape.list_type == MAP and shape.keys:
            return _merge_keyed(live, applied, shape)
        if shape.list_type == SET:
            return [*live, *(v for v in applied if v not in live)]
    return copy.deepcopy(applied)


def _merge_keyed(live: list[Any], applied: list[Any], shape: Shape) -> list[Any]:
    out = list(live)
    item_shape = shape.item()
    for item in applied:
        if not isinstance(item, dict):
            out.append(copy.deepcopy(item))
            continue
        element = fieldpaths.key(item, shape.keys)
        index = next(
            (
                i
                for i, old in enumerate(out)
                if isinstance(old, dict) and fieldpaths.key(old, shape.keys) == element
            ),
            -1,
        )
        if index >= 0:
            out[index] = merge(out[index], item, item_shape)
        else:
            out.append(copy.deepcopy(item))
    return out


def _is_key_of_kept_item(path: Path) -> bool:
    """A key field of a list item (the item is removed whole, or keeps its keys)."""
    return len(path) >= 2 and path[-2].startswith("k:") and path[-1][2:] in fieldpaths.from_key(path[-2][2:])


def _describe_manager(entry: Entry) -> str:
    text = f'"{entry.manager}"'
    if entry.subresource:
        text += f' with subresource "{entry.subresource}"'
    if entry.operation == UPDATE:
        text += f" using {entry.api_version}" + (f" at {entry.time}" if entry.time else "")
    return text


def conflict_error(conflicts: list[tuple[Entry, Path]]) -> StatusError:
    """kube's 409 for apply conflicts, one cause per field."""
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {_describe_manager(entry)}",
            "field": fieldpaths.describe(path),
        }
        for entry, path in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        where = fieldpaths.describe(path)
        message = f"Apply failed with 1 conflict: conflict with {_describe_manager(entry)}: {where}"
    else:
        by_manager: dict[str, list[Path]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(_describe_manager(entry), []).append(path)
        lines = []
        for manager in sorted(by_manager):
            lines.append(f"conflicts with {manager}:")
            lines += [f"- {fieldpaths.describe(p)}" for p in by_manager[manager]]
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", message, {"causes": causes})


def apply(
    live: dict[str, Any] | None, applied: dict[str, Any], tracking: Tracking, force: bool
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The object after applying ``applied`` to ``live`` (None: create), and its managedFields."""
    entries = read(live["metadata"]) if live is not None else []
    mine = find(entries, tracking.manager, APPLY, tracking.subresource)
    config = scoped(applied, tracking.status_subresource, tracking.subresource)
    wanted = fields_of(config, tracking.shape)
    base = live if live is not None else {"metadata": {}}
    merged = merge(base, config, tracking.shape)
    conflicts: list[tuple[Entry, Path]] = []
    for path in sorted(wanted):
        if is_element(path):
            continue  # an item or set element is only ever added, never changed
        before = value_at(base, path)
        if before is MISSING or before == value_at(merged, path):
            continue
        conflicts += [(entry, path) for entry in others(entries, mine) if path in entry.fields]
    if conflicts and not force:
        raise conflict_error(conflicts)
    for entry, path in conflicts:
        entry.fields.discard(path)
    previous = mine.fields if mine is not None else set()
    removed: list[Path] = []
    for path in sorted(previous - wanted, key=len):  # an item first, then nothing below it
        if any(path[: len(r)] == r for r in removed) or _is_key_of_kept_item(path):
            continue
        if not any(fieldpaths.has_descendant(e.fields, path) for e in others(entries, mine)):
            remove_at(merged, path)
            prune_empty(merged, path)
            removed.append(path)
    if mine is None:
        mine = Entry(tracking.manager, APPLY, tracking.api_version, now(), subresource=tracking.subresource)
        entries.append(mine)
    mine.fields, mine.api_version, mine.time = wanted, tracking.api_version, now()
    return merged, write(entries)
