"""Runs a PublishedResource's ``mutation.spec`` or ``mutation.status`` steps in order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from syncflow.sync.mutation.base import Context, MutationError, Obj, Transformer
from syncflow.sync.mutation.cel import CEL
from syncflow.sync.mutation.delete import Delete
from syncflow.sync.mutation.regex import Regex
from syncflow.sync.mutation.template import Template

if TYPE_CHECKING:
    from syncflow.api.publishedresource import Mutation, MutationSpec


def compile_step(step: Mutation) -> Transformer:
    """The transformer of one ``ResourceMutation`` (exactly one kind is set; the model checks that)."""
    if step.delete is not None:
        return Delete(step.delete.path)
    if step.regex is not None:
        return Regex(step.regex.path, step.regex.pattern, step.regex.replacement)
    if step.template is not None:
        return Template(step.template.path, step.template.template)
    if step.cel is not None:
        return CEL(step.cel.path, step.cel.expression)
    raise MutationError("no valid mutation mechanism provided")


class Steps:
    """Compiled steps of one direction; :meth:`apply` runs them in order."""

    def __init__(self, direction: str, steps: Sequence[Mutation] | None) -> None:
        self.direction = direction
        self.steps: list[Transformer] = []
        for i, step in enumerate(steps or []):
            try:
                self.steps.append(compile_step(step))
            except MutationError as err:
                raise MutationError(f"mutation.{direction}[{i}]: {err}") from None

    def apply(self, obj: Obj, other: Mapping[str, Any] | None = None) -> Obj:
        """A mutated copy of ``obj``; raises :class:`MutationError` naming the failing step."""
        context = Context(other)
        for i, step in enumerate(self.steps):
            try:
                obj = step.apply(obj, context)
            except MutationError as err:
                raise MutationError(f"mutation.{self.direction}[{i}]: {err}") from None
        return obj


class Mutator:
    """Both directions of a ``ResourceMutationSpec``: ``spec`` (kcp → service) and ``status`` (back)."""

    def __init__(self, spec: MutationSpec | None) -> None:
        self.spec = Steps("spec", spec.spec if spec else None)
        self.status = Steps("status", spec.status if spec else None)

    def mutate_spec(self, obj: Obj, other: Mapping[str, Any] | None = None) -> Obj:
        """The object going to the service cluster; ``other`` is its existing copy there, if any."""
        return self.spec.apply(obj, other)

    def mutate_status(self, obj: Obj, other: Mapping[str, Any] | None = None) -> Obj:
        """The service object whose status goes back to kcp; ``other`` is the kcp object."""
        return self.status.apply(obj, other)
