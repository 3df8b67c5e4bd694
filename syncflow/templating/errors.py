"""The errors of template compilation and rendering, with line and column."""

from __future__ import annotations

from typing import NoReturn


class TemplateError(ValueError):
    """A template that cannot be compiled or rendered; the message says where and what was expected."""


class CallError(Exception):
    """A function rejected its arguments; the executor adds the function name and position."""


def where(src: str, offset: int) -> str:
    """``line L, column C`` of ``offset`` in ``src``."""
    line = src.count("\n", 0, offset) + 1
    return f"line {line}, column {offset - src.rfind(chr(10), 0, offset)}"


def fail(src: str, offset: int, msg: str) -> NoReturn:
    """Raise a :class:`TemplateError` located at ``offset``."""
    raise TemplateError(f"{where(src, offset)}: {msg}")
