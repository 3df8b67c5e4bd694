"""Recursive-descent parser: tokens → parse tree, checking functions, variables and pipelines as Go does."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection
from typing import Any, NoReturn

from syncflow.templating.errors import fail, where
from syncflow.templating.lexer import Tok, number, unquote
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

_CONTROLS = frozenset({"if", "with", "range"})
_UNSUPPORTED = frozenset({"define", "template", "block", "break", "continue"})
_KEYWORDS = _CONTROLS | _UNSUPPORTED | {"else", "end"}


_EXPECTED = {"right": '"}}"', "rparen": '")"'}


def _describe(tok: Tok) -> str:
    return {"eof": "end of template", "right": '"}}"'}.get(tok.kind, repr(tok.text))


class Parser:
    """Recursive descent over the tokens; checks functions, variables and pipelines as Go's parser does."""

    def __init__(self, src: str, toks: list[Tok], functions: Collection[str]) -> None:
        self.src = src
        self.functions = functions
        self.toks = toks
        self.i = 0
        self.scopes: list[set[str]] = [{"$"}]

    def fail(self, tok: Tok, msg: str) -> NoReturn:
        fail(self.src, tok.pos, msg)

    def next(self) -> Tok:
        self.i += 1
        return self.toks[self.i - 1]

    def peek(self, ahead: int = 0) -> Tok:
        return self.toks[min(self.i + ahead, len(self.toks) - 1)]

    def expect(self, kind: str, context: str) -> None:
        tok = self.next()
        if tok.kind != kind:
            self.fail(tok, f"unexpected {_describe(tok)} in {context}: expected {_EXPECTED[kind]}")

    def parse(self) -> tuple[Node, ...]:
        nodes, stop = self.parse_list()
        if stop is not None:
            self.fail(stop, f"unexpected {{{{{stop.text}}}}}: no if, with or range is open")
        return nodes

    def parse_list(self) -> tuple[tuple[Node, ...], Tok | None]:
        """Nodes up to the end of the template or an ``else``/``end`` keyword (consumed and returned)."""
        self.scopes.append(set())
        nodes: list[Node] = []
        stop = None
        while (tok := self.next()).kind != "eof":
            if tok.kind == "text":
                nodes.append(Text(tok.text))
                continue
            head = self.peek()
            if head.kind == "ident" and head.text in ("else", "end"):
                stop = self.next()
                break
            nodes.append(self.parse_action(head))
        self.scopes.pop()
        return tuple(nodes), stop

    def parse_action(self, head: Tok) -> Node:
        if head.kind == "ident" and head.text in _UNSUPPORTED:
            self.fail(head, f"{{{{{head.text}}}}} is not supported in these templates")
        if head.kind == "ident" and head.text in _CONTROLS:
            self.next()
            return self.parse_control(head)
        return Action(self.parse_pipeline("right", "action"))

    def parse_control(self, kw: Tok) -> Control:
        self.scopes.append(set())
        pipe = self.parse_pipeline("right", f"{{{{{kw.text}}}}}", ranging=kw.text == "range")
        body, stop = self.parse_list()
        orelse = self.parse_rest(kw, stop)
        self.scopes.pop()
        return Control(kw.text, kw.pos, pipe, body, orelse)

    def parse_rest(self, kw: Tok, stop: Tok | None) -> tuple[Node, ...]:
        """What follows a control's body: its else branch, through the closing ``{{end}}``."""
        orelse: tuple[Node, ...] = ()
        if stop is not None and stop.text == "else":
            chained = self.peek()
            if chained.kind == "ident" and chained.text == kw.text != "range":
                self.next()
                return (self.parse_control(chained),)
            self.expect("right", "{{else}}")
            orelse, stop = self.parse_list()
        if stop is None:
            self.fail(kw, f"unclosed {{{{{kw.text}}}}}: expected {{{{end}}}}")
        if stop.text != "end":
            opened = where(self.src, kw.pos)
            self.fail(
                stop,
                f"unexpected {{{{{stop.text}}}}}: expected {{{{end}}}} for the {{{{{kw.text}}}}} at {opened}",
            )
        self.expect("right", "{{end}}")
        return orelse

    def parse_pipeline(self, end: str, context: str, ranging: bool = False) -> Pipe:
        """Declarations and ``|``-separated commands up to the ``end`` token (consumed)."""
        decls, assign = self.parse_decls(ranging)
        cmds = [self.parse_command(context)]
        while (tok := self.next()).kind != end:
            if tok.kind != "pipe":
                self.fail(tok, f'unexpected {_describe(tok)} in {context}: expected {_EXPECTED[end]} or "|"')
            cmds.append(self.parse_command(context))
        for stage, cmd in enumerate(cmds[1:], start=2):
            head = cmd.args[0]
            if isinstance(head, Dot | Const):
                self.fail(
                    self.toks[self.i - 1],
                    f"non executable command in pipeline stage {stage}: "
                    f"{show(head)} cannot receive the piped value; use a function",
                )
        return Pipe(decls, assign, tuple(cmds))

    def parse_decls(self, ranging: bool) -> tuple[tuple[str, ...], bool]:
        """``$x :=``, ``$x =`` and, in range, ``$i, $e :=``; declared names enter the current scope."""
        first, second = self.peek(), self.peek(1)
        if first.kind != "var":
            return (), False
        names: tuple[str, ...]
        if second.kind in ("declare", "assign"):
            names, op = (first.text,), second
        elif ranging and second.kind == "comma" and self.peek(2).kind == "var":
            names, op = (first.text, self.peek(2).text), self.peek(3)
            if op.kind not in ("declare", "assign"):
                self.fail(op, f'unexpected {_describe(op)} in range: expected ":=" after {names[1]}')
        else:
            return (), False
        self.i += 2 * len(names)  # each name, then a comma or the operator
        if op.kind == "declare":
            self.scopes[-1].update(names)
        else:
            for name in names:
                self.check_var(first, name)
        return names, op.kind == "assign"

    def check_var(self, tok: Tok, name: str) -> None:
        if not any(name in scope for scope in self.scopes):
            self.fail(tok, f"undefined variable {name!r}: declare it first with {name} := ...")

    def parse_command(self, context: str) -> Command:
        args: list[Operand] = []
        while (tok := self.peek()).kind not in ("pipe", "right", "rparen", "eof"):
            if args and not tok.space:
                self.fail(tok, f"unexpected {_describe(tok)} in operand: separate arguments with spaces")
            args.append(self.parse_operand())
        if not args:
            self.fail(
                tok, f"missing command in {context}: expected a value or function before {_describe(tok)}"
            )
        return Command(tuple(args))

    def parse_operand(self) -> Operand:
        tok = self.next()
        if tok.kind == "field":
            return Field(tok.pos, (tok.text[1:], *self.parse_chain()))
        if tok.kind == "var":
            self.check_var(tok, tok.text)
            return Var(tok.pos, tok.text, self.parse_chain())
        if tok.kind == "lparen":
            pipe = self.parse_pipeline("rparen", "parenthesized pipeline")
            return Chain(tok.pos, pipe, self.parse_chain())
        op = self.parse_term(tok)
        if (after := self.peek()).kind == "field" and not after.space:
            self.fail(
                after,
                f"unexpected {after.text} after {tok.text}: fields apply to the dot, "
                "a variable or a parenthesized pipeline",
            )
        return op

    def parse_term(self, tok: Tok) -> Dot | Ident | Const:
        if tok.kind == "dot":
            return Dot(tok.pos)
        if tok.kind == "ident" and tok.text in _KEYWORDS:
            self.fail(tok, f"unexpected keyword {tok.text!r} in operand")
        if tok.kind == "ident":
            if tok.text not in self.functions:
                close = difflib.get_close_matches(tok.text, self.functions, n=3)
                hint = f" (did you mean {' or '.join(close)}?)" if close else ""
                self.fail(tok, f"function {tok.text!r} not defined{hint}")
            return Ident(tok.pos, tok.text)
        values: dict[str, Callable[[], Any]] = {
            "string": lambda: unquote(self.src, tok),
            "raw": lambda: tok.text[1:-1],
            "number": lambda: number(self.src, tok),
            "bool": lambda: tok.text == "true",
            "nil": lambda: None,
        }
        if tok.kind not in values:
            self.fail(
                tok, f"unexpected {_describe(tok)} in operand: expected a value, field, variable or function"
            )
        return Const(tok.pos, values[tok.kind](), tok.text)

    def parse_chain(self) -> tuple[str, ...]:
        names: list[str] = []
        while (tok := self.peek()).kind == "field" and not tok.space:
            names.append(tok.text[1:])
            self.i += 1
        return tuple(names)
