"""A template function and its Go signature, checked the way Go's executor checks arguments."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from syncflow.templating.errors import CallError
from syncflow.templating.values import Struct, go_type, is_int

Kind = str
"""A parameter's Go type: ``string``, ``int``, ``bool``, ``float``, ``map`` (``map[string]any``), ``any``."""


def _accepts(kind: Kind, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "int":
        return is_int(value)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "float":
        return isinstance(value, float) or is_int(value)
    if kind == "map":
        return value is None or (isinstance(value, Mapping) and not isinstance(value, Struct))
    return True


@dataclass(frozen=True)
class Func:
    """A function callable from templates.

    ``params`` are the Go parameter types, ``variadic`` the type of a trailing ``...`` parameter.
    ``sized`` functions can build large values from small arguments (``repeat``, ``printf``): they get
    the output limit as their first argument and must refuse work beyond it before allocating.
    """

    impl: Callable[..., Any]
    params: tuple[Kind, ...]
    variadic: Kind | None = None
    sized: bool = False

    def call(self, args: Sequence[Any], limit: int) -> Any:
        """Check ``args`` against the signature, then call; raises :class:`CallError`."""
        want = len(self.params)
        if len(args) < want or (self.variadic is None and len(args) > want):
            least = "at least " if self.variadic else ""
            raise CallError(f"wrong number of args: want {least}{want} got {len(args)}")
        converted = []
        for i, arg in enumerate(args):
            kind = self.params[i] if i < want else self.variadic
            assert kind is not None
            if not _accepts(kind, arg):
                hint = " (a missing field?)" if arg is None else ""
                raise CallError(f"wrong type for argument {i + 1}: expected {kind}, got {go_type(arg)}{hint}")
            converted.append({} if kind == "map" and arg is None else arg)
        return self.impl(limit, *converted) if self.sized else self.impl(*converted)


def check_size(limit: int, size: int, what: str) -> None:
    """Refuse to build a value of ``size`` characters or items beyond ``limit``."""
    if size > limit:
        raise CallError(f"{what} would be {size} long, beyond the output limit of {limit}")
