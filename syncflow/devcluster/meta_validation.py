"""``metadata`` validation as apimachinery's ``ValidateObjectMeta`` does it, with kube's field paths."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from syncflow.devcluster import fielderrors as fe
from syncflow.devcluster.errors import FieldError
from syncflow.util import names

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

NameValidator = Callable[[str], list[str]]


def validate_object_meta(
    meta: Mapping[str, Any],
    *,
    namespaced: bool,
    name_validator: NameValidator = names.dns1123_subdomain,
    path: str = "metadata",
) -> list[FieldError]:
    """Check name, generateName, namespace, generation, labels, annotations, finalizers, ownerReferences.

    The server fills ``name`` from ``generateName`` before calling this; an empty name is then
    ``Required value: name or generateName is required``. Map keys are checked in sorted order so
    the causes are stable (kube-apiserver walks maps in random order).
    """
    errs = _names(meta, namespaced, name_validator, path)
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(fe.invalid(f"{path}.generation", generation, "must be greater than or equal to 0"))
    errs += validate_labels(meta.get("labels") or {}, f"{path}.labels")
    errs += validate_annotations(meta.get("annotations") or {}, f"{path}.annotations")
    errs += _finalizers(meta.get("finalizers") or [], f"{path}.finalizers")
    errs += _owner_references(meta.get("ownerReferences") or [], f"{path}.ownerReferences")
    return errs


def _names(
    meta: Mapping[str, Any], namespaced: bool, name_validator: NameValidator, path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    generate_name = meta.get("generateName") or ""
    if generate_name:
        # A prefix may end in '-': the random suffix follows it.
        masked = generate_name[:-1] + "a" if generate_name.endswith("-") else generate_name
        errs += [fe.invalid(f"{path}.generateName", generate_name, m) for m in name_validator(masked)]
    name = meta.get("name") or ""
    if not name:
        errs.append(fe.required(f"{path}.name", "name or generateName is required"))
    else:
        errs += [fe.invalid(f"{path}.name", name, m) for m in name_validator(name)]
    namespace = meta.get("namespace") or ""
    if namespaced and not namespace:
        errs.append(fe.required(f"{path}.namespace"))
    elif namespaced:
        errs += [fe.invalid(f"{path}.namespace", namespace, m) for m in names.dns1123_label(namespace)]
    elif namespace:
        errs.append(fe.forbidden(f"{path}.namespace", "not allowed on this type"))
    return errs


def validate_labels(labels: Mapping[str, Any], path: str = "metadata.labels") -> list[FieldError]:
    """Label keys must be qualified names and values valid label values."""
    errs: list[FieldError] = []
    for key in sorted(labels):
        errs += [fe.invalid(path, key, m) for m in names.qualified_name(key)]
        value = labels[key]
        if not isinstance(value, str):
            errs.append(fe.type_invalid(f"{path}.{key}", value, "must be a string"))
            continue
        errs += [fe.invalid(path, value, m) for m in names.label_value(value)]
    return errs


def validate_annotations(
    annotations: Mapping[str, Any], path: str = "metadata.annotations"
) -> list[FieldError]:
    """Annotation keys are case-insensitive qualified names; all keys and values together ≤ 256 KiB."""
    errs: list[FieldError] = []
    total = 0
    for key in sorted(annotations):
        errs += [fe.invalid(path, key, m) for m in names.qualified_name(key.lower())]
        value = annotations[key]
        if not isinstance(value, str):
            errs.append(fe.type_invalid(f"{path}.{key}", value, "must be a string"))
            continue
        total += len(key.encode()) + len(value.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(fe.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def _finalizers(finalizers: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for finalizer in finalizers:
        errs += [fe.invalid(path, finalizer, m) for m in names.qualified_name(str(finalizer))]
    return errs


def _owner_references(refs: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    controllers = 0
    for ref in refs:
        if not isinstance(ref, Mapping):
            errs.append(fe.type_invalid(path, ref, "must be an object"))
            continue
        for key, what in (("apiVersion", "version"), ("kind", "kind"), ("name", "name"), ("uid", "uid")):
            if not ref.get(key):
                errs.append(fe.invalid(f"{path}.{key}", ref.get(key, ""), f"{what} must not be empty"))
        controllers += bool(ref.get("controller"))
    if controllers > 1:
        errs.append(fe.invalid(path, refs, "Only one reference can have Controller set to true"))
    return errs
