"""What every mutation kind shares: its interface, its context and its error."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

Obj = dict[str, Any]


class MutationError(ValueError):
    """A mutation that cannot be compiled or applied; the message names the step and the reason."""


@dataclass(frozen=True)
class Context:
    """What a mutation may read besides the object it changes."""

    other: Mapping[str, Any] | None = None
    """The object on the other side of the sync (the existing copy, or the kcp object for status);
    None when there is none yet."""


class Transformer(Protocol):
    """One mutation step."""

    def apply(self, obj: Obj, context: Context) -> Obj:
        """A mutated copy of ``obj``; ``obj`` itself is left alone. Raises :class:`MutationError`."""
        ...
