"""sprig's ``default``, ``empty``, ``coalesce``, ``all``, ``any``, ``ternary`` and ``fail``."""

from __future__ import annotations

from typing import Any

from syncflow.templating.errors import CallError
from syncflow.templating.func import Func
from syncflow.templating.lists import empty


def _default(fallback: Any, *given: Any) -> Any:
    """The given value unless it is empty (nil, 0, false, "", [] or {}), else the fallback."""
    return fallback if not given or empty(given[0]) else given[0]


def _fail(message: str) -> str:
    raise CallError(message)


FUNCTIONS: dict[str, Func] = {
    "default": Func(_default, ("any",), "any"),
    "empty": Func(empty, ("any",)),
    "coalesce": Func(lambda *values: next((v for v in values if not empty(v)), None), (), "any"),
    "all": Func(lambda *values: all(not empty(v) for v in values), (), "any"),
    "any": Func(lambda *values: any(not empty(v) for v in values), (), "any"),
    "ternary": Func(lambda yes, no, cond: yes if cond else no, ("any", "any", "bool")),
    "fail": Func(_fail, ("string",)),
}
