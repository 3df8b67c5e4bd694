"""The parse tree of a template."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Dot:
    pos: int


@dataclass(frozen=True)
class Field:
    pos: int
    names: tuple[str, ...]


@dataclass(frozen=True)
class Var:
    pos: int
    name: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class Ident:
    pos: int
    name: str


@dataclass(frozen=True)
class Const:
    pos: int
    value: Any
    text: str


@dataclass(frozen=True)
class Chain:
    pos: int
    pipe: Pipe
    names: tuple[str, ...]


Operand = Dot | Field | Var | Ident | Const | Chain


@dataclass(frozen=True)
class Command:
    args: tuple[Operand, ...]


@dataclass(frozen=True)
class Pipe:
    decls: tuple[str, ...]
    assign: bool
    cmds: tuple[Command, ...]


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Action:
    pipe: Pipe


@dataclass(frozen=True)
class Control:
    kind: str  # if, with, range
    pos: int
    pipe: Pipe
    body: tuple[Node, ...]
    orelse: tuple[Node, ...]


Node = Text | Action | Control


def show(op: Operand) -> str:
    """An operand as written, for messages."""
    chain = "".join("." + n for n in getattr(op, "names", ()))
    if isinstance(op, Dot):
        return "."
    if isinstance(op, Var):
        return op.name + chain
    if isinstance(op, Chain):
        return "(...)" + chain
    if isinstance(op, Field):
        return chain
    return op.name if isinstance(op, Ident) else op.text
