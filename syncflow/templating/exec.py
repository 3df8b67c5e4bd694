"""Runs a parse tree over data with Go's semantics, within an output limit and a step budget."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NoReturn

from syncflow.templating.errors import CallError, TemplateError, fail
from syncflow.templating.functions import FUNCTIONS
from syncflow.templating.nodes import (
    Action,
    Chain,
    Command,
    Const,
    Control,
    Dot,
    Field,
    Ident,
    Node,
    Operand,
    Pipe,
    Text,
    Var,
    show,
)
from syncflow.templating.values import MISSING, Method, Struct, fmt_value, go_type, is_int, is_nil, truth

_UNSET = object()  # no value piped into a command
MAX_STEPS = 250_000
"""Actions, loop iterations and function calls one rendering may run: ``range`` over a huge list ends."""

_HTML_ESCAPES = {
    "\0": "\ufffd",
    '"': "&#34;",
    "&": "&amp;",
    "'": "&#39;",
    "+": "&#43;",
    "<": "&lt;",
    ">": "&gt;",
}


def _arg(value: Any) -> Any:
    """A value as a function receives it: no value becomes nil."""
    return None if value is MISSING else value


def html_escape(value: Any) -> str:
    """``html/template``'s escaping of an action's value in text context (nil prints nothing)."""
    text = value if isinstance(value, str) else "" if is_nil(value) else fmt_value(value)
    return "".join(_HTML_ESCAPES.get(ch, ch) for ch in text)


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode())
    return len(value) if isinstance(value, list | tuple | Mapping) else 0


class Exec:
    """One rendering: the output so far, the variable stack and the budgets."""

    def __init__(self, src: str, data: Mapping[str, Any], limit: int, html: bool) -> None:
        self.src = src
        self.vars: list[tuple[str, Any]] = [("$", data)]
        self.out: list[str] = []
        self.size = 0
        self.limit = limit
        self.steps = 0
        self.html = html

    def fail(self, pos: int, msg: str) -> NoReturn:
        fail(self.src, pos, msg)

    def step(self, pos: int) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            self.fail(pos, f"the template ran more than {MAX_STEPS} steps; it is stopped")

    def emit(self, text: str, pos: int) -> None:
        self.size += _size(text)
        if self.size > self.limit:
            self.fail(pos, f"output is longer than the limit of {self.limit} bytes; rendering stopped")
        self.out.append(text)

    def walk(self, nodes: tuple[Node, ...], dot: Any) -> None:
        for node in nodes:
            if isinstance(node, Text):
                self.emit(node.text, 0)
            elif isinstance(node, Action):
                value = self.pipe(node.pipe, dot)
                if not node.pipe.decls:
                    self.emit(self.show(value), node.pipe.cmds[0].args[0].pos)
            elif node.kind == "range":
                self.range(node, dot)
            else:
                self.branch(node, dot)

    def show(self, value: Any) -> str:
        if self.html:
            return html_escape(value)
        return "<no value>" if is_nil(value) else fmt_value(value)

    def branch(self, node: Control, dot: Any) -> None:
        mark = len(self.vars)
        value = self.pipe(node.pipe, dot)
        if truth(value):
            self.walk(node.body, value if node.kind == "with" else dot)
        else:
            self.walk(node.orelse, dot)
        del self.vars[mark:]

    def range(self, node: Control, dot: Any) -> None:
        mark = len(self.vars)
        value = self.pipe(node.pipe, dot, declare=False)
        items = self.items(node, value)
        for key, elem in items:
            self.step(node.pos)
            decls = node.pipe.decls
            for name, bound in zip(decls, (key, elem)[2 - len(decls) :], strict=True):
                self.bind(name, bound, node.pipe.assign)
            self.walk(node.body, elem)
            del self.vars[mark:]
        if not items:
            self.walk(node.orelse, dot)

    def items(self, node: Control, value: Any) -> list[tuple[Any, Any]]:
        if is_nil(value):
            return []
        if isinstance(value, Mapping) and not isinstance(value, Struct):
            return [(key, value[key]) for key in sorted(value)]
        if isinstance(value, list | tuple):
            return list(enumerate(value))
        if is_int(value) and len(node.pipe.decls) < 2:
            if value > MAX_STEPS:
                self.fail(
                    node.pos, f"range over {value} is more than the {MAX_STEPS} steps a template may run"
                )
            return [(i, i) for i in range(value)]
        self.fail(
            node.pos,
            f"range can't iterate over {fmt_value(value)} ({go_type(value)}): expected a list or map",
        )

    def bind(self, name: str, value: Any, assign: bool) -> None:
        if not assign:
            self.vars.append((name, value))
            return
        index = max(i for i, (known, _) in enumerate(self.vars) if known == name)
        self.vars[index] = (name, value)

    def lookup(self, name: str) -> Any:
        return next(value for known, value in reversed(self.vars) if known == name)

    def pipe(self, pipe: Pipe, dot: Any, declare: bool = True) -> Any:
        value: Any = _UNSET
        for cmd in pipe.cmds:
            value = self.command(cmd, dot, value)
        if declare:
            for name in pipe.decls:
                self.bind(name, value, pipe.assign)
        return value

    def command(self, cmd: Command, dot: Any, final: Any) -> Any:
        head, rest = cmd.args[0], cmd.args[1:]
        self.step(head.pos)
        if isinstance(head, Ident):
            return self.call(head, rest, dot, final)
        if isinstance(head, Field | Var | Chain) and head.names:
            receiver = self.receiver(head, dot, head.names[:-1])
            value = self.field(receiver, head.names[-1], head.pos, call=False)
            if isinstance(value, Method):
                return self.method(head, value, rest, dot, final)
        if rest or final is not _UNSET:
            self.fail(head.pos, f"{show(head)} is not a function and cannot take arguments")
        if isinstance(head, Const) and head.value is None:
            self.fail(head.pos, "nil is not a command")
        return self.operand(head, dot)

    def method(self, head: Operand, method: Method, ops: tuple[Operand, ...], dot: Any, final: Any) -> Any:
        args = [self.arg(op, dot) for op in ops]
        if final is not _UNSET:
            args.append(_arg(final))
        try:
            return method.impl(*args)
        except CallError as err:
            self.fail(head.pos, f"error calling {show(head)}: {err}")
        except TypeError:
            self.fail(head.pos, f"wrong number of args for {show(head)}: got {len(args)}")

    def receiver(self, op: Field | Var | Chain, dot: Any, names: tuple[str, ...]) -> Any:
        receiver = dot
        if isinstance(op, Var):
            receiver = self.lookup(op.name)
        elif isinstance(op, Chain):
            receiver = self.pipe(op.pipe, dot)
        for name in names:
            receiver = self.field(receiver, name, op.pos)
        return receiver

    def operand(self, op: Operand, dot: Any) -> Any:
        if isinstance(op, Dot):
            return dot
        if isinstance(op, Const):
            return op.value
        if isinstance(op, Ident):
            return self.call(op, (), dot, _UNSET)
        return self.receiver(op, dot, op.names)

    def arg(self, op: Operand, dot: Any) -> Any:
        return _arg(self.operand(op, dot))

    def field(self, receiver: Any, name: str, pos: int, call: bool = True) -> Any:
        if receiver is MISSING:
            return MISSING
        if isinstance(receiver, Struct):
            if name not in receiver:
                self.fail(
                    pos, f"can't evaluate field {name}: the data has only {', '.join(sorted(receiver))}"
                )
            value = receiver[name]
            return value.impl() if call and isinstance(value, Method) else value
        if isinstance(receiver, Mapping):
            return receiver.get(name, MISSING)
        if receiver is None:
            self.fail(pos, f"nil pointer evaluating interface {{}}.{name}")
        self.fail(pos, f"can't evaluate field {name} in type {go_type(receiver)}")

    def call(self, ident: Ident, ops: tuple[Operand, ...], dot: Any, final: Any) -> Any:
        thunks: list[Callable[[], Any]] = [partial(self.arg, op, dot) for op in ops]
        if final is not _UNSET:
            thunks.append(partial(_arg, final))
        try:
            if ident.name in ("and", "or"):
                return _logic(ident.name, thunks)
            result = FUNCTIONS[ident.name].call([get() for get in thunks], self.limit)
        except CallError as err:
            self.fail(ident.pos, f"error calling {ident.name}: {err}")
        if _size(result) > self.limit:
            self.fail(
                ident.pos, f"error calling {ident.name}: the result is longer than the limit of {self.limit}"
            )
        return result


def _logic(name: str, thunks: list[Callable[[], Any]]) -> Any:
    """``and``/``or``: the first argument that decides, else the last; the rest stay unevaluated."""
    if not thunks:
        raise CallError("wrong number of args: want at least 1 got 0")
    value = None
    for get in thunks:
        value = get()
        if truth(value) == (name == "or"):
            return value
    return value


def render(src: str, nodes: tuple[Node, ...], data: Mapping[str, Any], limit: int, html: bool) -> str:
    """Execute ``nodes`` with ``data`` as the dot."""
    run = Exec(src, data, limit, html)
    try:
        run.walk(nodes, data)
    except RecursionError:
        raise TemplateError("the template nests too deeply") from None
    return "".join(run.out)
