"""Options of write requests (``CreateOptions``, ``UpdateOptions``, ``PatchOptions``, ``DeleteOptions``).

They come from the query string (and, for deletes, the ``DeleteOptions`` body) and are validated
as kube-apiserver does: an unknown ``dryRun`` value, a ``fieldManager`` that is too long or not
printable, ``force`` on a patch that is not an apply patch, or an apply patch without a
``fieldManager`` answer ``422`` for the options kind (``PatchOptions.meta.k8s.io "" is invalid: …``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from syncflow.devcluster import errors
from syncflow.devcluster.crud import APPLY_PATCH
from syncflow.devcluster.errors import FieldError

DRY_RUN_ALL = "All"
FIELD_VALIDATIONS = ("Ignore", "Warn", "Strict")
FIELD_MANAGER_MAX_LENGTH = 128
_OPTIONS_GROUP = "meta.k8s.io"


@dataclass(frozen=True)
class WriteOptions:
    """What a write request asked for besides its body."""

    dry_run: bool = False
    field_manager: str = ""
    force: bool = False
    field_validation: str = "Warn"  # Ignore, Warn or Strict: what unknown fields in the body get


def _go_strings(values: Iterable[str]) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


def _field_manager_errors(manager: str) -> list[FieldError]:
    problems = []
    if len(manager) > FIELD_MANAGER_MAX_LENGTH:
        problems.append(
            FieldError(
                "fieldManager",
                "FieldValueTooLong",
                f"Too long: must have at most {FIELD_MANAGER_MAX_LENGTH} bytes",
            )
        )
    for i, char in enumerate(manager):
        if not char.isprintable():
            problems.append(
                FieldError(
                    "fieldManager",
                    "FieldValueInvalid",
                    f'Invalid value: "{manager}": invalid character U+{ord(char):04X} (at position {i})',
                )
            )
    return problems


def write_options(
    kind: str,
    query: Mapping[str, str],
    dry_run: list[str],
    *,
    patch_type: str = "",
    body_options: Mapping[str, object] | None = None,
) -> WriteOptions:
    """Validated options of a write; ``kind`` is ``Create``, ``Update``, ``Patch`` or ``Delete``.

    ``dry_run`` holds every ``dryRun`` value of the query string; ``body_options`` is a parsed
    ``DeleteOptions`` body (whose ``dryRun`` list counts too).
    """
    values = list(dry_run)
    body_dry_run = (body_options or {}).get("dryRun")
    if isinstance(body_dry_run, list):
        values += [str(v) for v in body_dry_run]
    problems: list[FieldError] = []
    if any(v != DRY_RUN_ALL for v in values):
        problems.append(
            FieldError(
                "dryRun",
                "FieldValueNotSupported",
                f'Unsupported value: {_go_strings(values)}: supported values: "{DRY_RUN_ALL}"',
            )
        )
    manager = query.get("fieldManager", "")
    force_given = "force" in query
    if kind == "Patch" and patch_type != APPLY_PATCH and force_given:
        problems.append(
            FieldError("force", "FieldValueForbidden", "Forbidden: may not be specified for non-apply patch")
        )
    if kind == "Patch" and patch_type == APPLY_PATCH and not manager:
        problems.append(
            FieldError("fieldManager", "FieldValueRequired", "Required value: is required for apply patch")
        )
    problems += _field_manager_errors(manager)
    validation = query.get("fieldValidation") or "Warn"
    if validation not in FIELD_VALIDATIONS:
        supported = ", ".join(f'"{v}"' for v in FIELD_VALIDATIONS)
        problems.append(
            FieldError(
                "fieldValidation",
                "FieldValueNotSupported",
                f'Unsupported value: "{validation}": supported values: {supported}',
            )
        )
    if problems:
        raise errors.invalid(f"{kind}Options", "", problems, _OPTIONS_GROUP)
    return WriteOptions(
        dry_run=bool(values),
        field_manager=manager,
        force=query.get("force", "").lower() in ("true", "1"),
        field_validation=validation,
    )
