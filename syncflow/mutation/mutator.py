"""Runs a PublishedResource's ``mutation.spec`` or ``mutation.status`` steps in order.

Steps are taken in their manifest form (``{"regex": {"path": ..., "pattern": ...}}``), as sync rules
carry them; :func:`compiled` compiles each distinct list once per process.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from syncflow.mutation.base import Context, MutationError, Obj, Transformer
from syncflow.mutation.cel import CEL
from syncflow.mutation.delete import Delete
from syncflow.mutation.regex import Regex
from syncflow.mutation.template import Template

Step = Mapping[str, Any]
"""One ``ResourceMutation`` as JSON: exactly one of ``delete``, ``regex``, ``template``, ``cel``."""


def compile_step(step: Step) -> Transformer:
    """The transformer of one ``ResourceMutation`` (the API model checks that exactly one kind is set)."""
    if (spec := step.get("delete")) is not None:
        return Delete(spec["path"])
    if (spec := step.get("regex")) is not None:
        return Regex(spec["path"], spec.get("pattern"), spec.get("replacement"))
    if (spec := step.get("template")) is not None:
        return Template(spec["path"], spec["template"])
    if (spec := step.get("cel")) is not None:
        return CEL(spec["path"], spec["expression"])
    raise MutationError("no valid mutation mechanism provided")


class Steps:
    """Compiled steps of one direction; :meth:`apply` runs them in order."""

    def __init__(self, direction: str, steps: Sequence[Step] | None) -> None:
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


@functools.lru_cache(maxsize=512)
def _compiled(direction: str, steps_json: str) -> Steps:
    return Steps(direction, json.loads(steps_json))


def compiled(direction: str, steps: Sequence[Step]) -> Steps:
    """The compiled ``steps`` (cached per process by their JSON); raises :class:`MutationError`."""
    return _compiled(direction, json.dumps(list(steps), sort_keys=True))
