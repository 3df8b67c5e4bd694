"""Building blocks of API models: the base config and metav1's ObjectMeta, LabelSelector and Condition.

Every model reads and writes camelCase JSON (``model_dump()`` uses the aliases); Python code uses
snake_case attributes. Optional fields default to ``None`` so that a dump with ``exclude_none=True``
gives back exactly what was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from syncflow.util import names

RULES_ERROR = "rules"
"""The pydantic error type of :func:`rule_error`; its context holds ``problems``."""


def rule_error(problems: Sequence[tuple[str, str]]) -> PydanticCustomError:
    """An error for cross-field rules: ``(relative path, reason)`` pairs; ``""`` is the object itself."""
    text = "; ".join(f"{path}: {reason}" if path else reason for path, reason in problems)
    return PydanticCustomError(RULES_ERROR, text, {"problems": list(problems)})


def exactly_one(model: BaseModel, fields: Sequence[str]) -> list[tuple[str, str]]:
    """A problem unless exactly one of ``fields`` (attribute names) is set."""
    aliases = [to_camel(f) for f in fields]
    given = [alias for field, alias in zip(fields, aliases, strict=True) if getattr(model, field) is not None]
    if len(given) == 1:
        return []
    shown = ", ".join(aliases)
    if not given:
        return [("", f"Required value: exactly one of {shown} must be set")]
    return [("", f"Forbidden: exactly one of {shown} may be set, found {', '.join(given)}")]


def _invalid(value: str, message: str) -> str:
    return f'Invalid value: "{value}": {message}'


class APIModel(BaseModel):
    """Base of spec-like models: camelCase JSON, strict types, unknown fields rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
        strict=True,
        use_attribute_docstrings=True,
    )


class LenientModel(APIModel):
    """Base of models whose unknown fields are kept (metadata) rather than rejected."""

    model_config = ConfigDict(extra="allow")


class ObjectMeta(LenientModel):
    """The parts of ``metav1.ObjectMeta`` syncflow reads; other fields are kept as given."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    finalizers: list[str] | None = None


class LabelSelectorRequirement(APIModel):
    """A label selector requirement: a key, an operator and values."""

    key: str
    """The label key that the selector applies to."""
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    """The key's relationship to the values."""
    values: list[str] | None = None
    """Non-empty for In and NotIn, empty for Exists and DoesNotExist."""

    @model_validator(mode="after")
    def _check(self) -> LabelSelectorRequirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise rule_error(
                [("values", "Required value: must be specified when `operator` is 'In' or 'NotIn'")]
            )
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise rule_error(
                [("values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")]
            )
        return self


class LabelSelectorFields(APIModel):
    """``metav1.LabelSelector``'s fields without label syntax checks (keys and values may be templates)."""

    match_labels: dict[str, str] | None = None
    """{key: value} pairs, each equivalent to an In requirement with one value."""
    match_expressions: list[LabelSelectorRequirement] | None = None
    """Label selector requirements."""


class LabelSelector(LabelSelectorFields):
    """``metav1.LabelSelector``: requirements are ANDed; an empty selector matches everything."""

    @model_validator(mode="after")
    def _check_labels(self) -> LabelSelector:
        problems: list[tuple[str, str]] = []
        for key, value in (self.match_labels or {}).items():
            problems.extend(("matchLabels", _invalid(key, m)) for m in names.qualified_name(key))
            problems.extend(("matchLabels", _invalid(value, m)) for m in names.label_value(value))
        for i, expr in enumerate(self.match_expressions or []):
            path = f"matchExpressions[{i}]"
            problems.extend((f"{path}.key", _invalid(expr.key, m)) for m in names.qualified_name(expr.key))
            for j, value in enumerate(expr.values or []):
                problems.extend((f"{path}.values[{j}]", _invalid(value, m)) for m in names.label_value(value))
        if problems:
            raise rule_error(problems)
        return self


_CONDITION_TYPE = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)


class Condition(APIModel):
    """``metav1.Condition``: one aspect of an object's current state."""

    type: str = Field(max_length=316, pattern=_CONDITION_TYPE)
    """The condition type in CamelCase, e.g. Ready."""
    status: Literal["True", "False", "Unknown"]
    """Whether the condition holds."""
    observed_generation: int | None = Field(default=None, ge=0)
    """The .metadata.generation the condition was set for."""
    last_transition_time: str = Field(json_schema_extra={"format": "date-time"})
    """When the status last changed (RFC 3339)."""
    reason: str = Field(max_length=1024, min_length=1, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
    """A CamelCase, machine-readable reason for the last transition."""
    message: str = Field(max_length=32768)
    """A human-readable message about the transition."""
