"""A subset of Go's ``text/template`` with the functions api-syncagent gives PublishedResource templates.

Supported: text and ``{{ }}`` actions with the trim markers ``{{- `` and `` -}}``; ``{{/* comments */}}``;
field chains on the dot (``.Object.metadata.name``), on variables (``$``, ``$x.y``) and on parenthesised
pipelines; pipelines, where the piped value is the last argument of the next command; literals (strings
with Go escapes, raw `` `strings` ``, decimal/hex/octal/binary ints, floats, ``true``, ``false``,
``nil``); ``$x := pipeline`` and ``$x = pipeline``; ``if``/``else if``/``else``/``end``,
``with``/``else with``/``else``/``end`` and ``range`` (lists, maps in key order, ints; ``$e :=`` or
``$i, $e :=``)/``else``/``end``. Functions: ``sha3sum``, ``sha3short``, ``shortHash``, ``lower``,
``upper``, ``trim``, ``len``, ``list``, ``join``, ``default``, ``eq``, ``ne``, ``and``, ``or``, ``not``,
``printf`` (verbs ``%v %s %d %q %t %x %X %f`` with width, precision and the ``-``/``0`` flags) and
``print``. Unknown functions and variables are compile errors, as in Go.

Not supported: ``define``/``template``/``block``, ``break``/``continue``, character constants, complex
numbers, methods, custom delimiters and every other function (``index``, ``slice``, the rest of sprig)
are compile errors; other ``printf`` verbs and flags are left in the output as written.

A missing map key is "no value" (printed ``<no value>``, ``nil`` when passed to a function) as for
Go's ``map[string]any``; an unknown field of a :class:`Struct` is an error, as for a Go struct.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any, NoReturn


class TemplateError(ValueError):
    """A template that cannot be compiled or rendered; the message says where and what was expected."""


class Struct(dict[str, Any]):
    """Template data whose unknown fields are errors, as a Go struct's are (a map's give ``<no value>``)."""


class _Missing:
    """The value of a missing map key: Go's invalid ``reflect.Value``."""


_MISSING = _Missing()
_UNSET = object()  # no value piped into a command
_SPACE = " \t\r\n"


def _where(src: str, offset: int) -> str:
    line = src.count("\n", 0, offset) + 1
    return f"line {line}, column {offset - src.rfind(chr(10), 0, offset)}"


def _fail(src: str, offset: int, msg: str) -> NoReturn:
    raise TemplateError(f"{_where(src, offset)}: {msg}")


# ---------------------------------------------------------------------------------------------- lexer


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    pos: int
    space: bool = False  # whitespace precedes it inside the action


_NUMBER_RE = re.compile(
    r"[+-]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)"
)
_WORD_RE = re.compile(r"\w+")
_PUNCT = {"|": "pipe", "(": "lparen", ")": "rparen", ",": "comma", "=": "assign"}


class _Lexer:
    """Splits a template into text and action tokens, applying trim markers to the text."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.toks: list[_Tok] = []
        self.trim_next = False

    def run(self) -> list[_Tok]:
        pos = 0
        while (start := self.src.find("{{", pos)) >= 0:
            inner = start + 2
            trim = self.src.startswith("-", inner) and self.src[inner + 1 : inner + 2] in tuple(_SPACE)
            self._text(pos, start, trim)
            inner += 2 if trim else 0
            if self.src.startswith("/*", inner):
                pos = self._comment(start, inner + 2)
            else:
                pos = self._action(start, inner)
        self._text(pos, len(self.src), False)
        self.toks.append(_Tok("eof", "", len(self.src)))
        return self.toks

    def _text(self, start: int, end: int, trim_right: bool) -> None:
        text = self.src[start:end]
        if self.trim_next:
            text = text.lstrip(_SPACE)
        if trim_right:
            text = text.rstrip(_SPACE)
        self.trim_next = False
        if text:
            self.toks.append(_Tok("text", text, start))

    def _close(self, pos: int) -> int | None:
        """The end of a right delimiter at ``pos`` (noting a trim marker), or None."""
        if self.src.startswith("}}", pos):
            return pos + 2
        if self.src[pos : pos + 1] in tuple(_SPACE) and self.src.startswith("-}}", pos + 1):
            self.trim_next = True
            return pos + 4
        return None

    def _comment(self, start: int, pos: int) -> int:
        end = self.src.find("*/", pos)
        if end < 0:
            _fail(self.src, start, 'unclosed comment: expected "*/}}"')
        close = self._close(end + 2)
        if close is None:
            _fail(
                self.src,
                end,
                'comment ends before the closing delimiter: expected "*/}}" with nothing between',
            )
        return close

    def _action(self, start: int, pos: int) -> int:
        self.toks.append(_Tok("left", "{{", start))
        space = True
        while True:
            if pos >= len(self.src):
                _fail(self.src, start, 'unclosed action: expected "}}"')
            close = self._close(pos)
            if close is not None:
                self.toks.append(_Tok("right", "}}", pos))
                return close
            if self.src[pos] in _SPACE:
                pos, space = pos + 1, True
                continue
            pos = self._token(pos, space)
            space = False

    def _token(self, pos: int, space: bool) -> int:
        src, ch = self.src, self.src[pos]
        if src.startswith(":=", pos):
            kind, end = "declare", pos + 2
        elif ch in _PUNCT:
            kind, end = _PUNCT[ch], pos + 1
        elif ch == '"':
            kind, end = "string", self._quoted_end(pos)
        elif ch == "`":
            kind, end = "raw", src.find("`", pos + 1) + 1
            if end == 0:
                _fail(src, pos, "unterminated raw string: expected a closing backtick")
        elif number := _NUMBER_RE.match(src, pos):
            kind, end = "number", number.end()
            if end < len(src) and (src[end].isalnum() or src[end] in "_."):
                _fail(src, pos, f"bad number syntax: {src[pos : end + 1]!r}")
        elif ch in "$.":
            word = _WORD_RE.match(src, pos + 1)
            end = word.end() if word else pos + 1
            kind = "var" if ch == "$" else "field" if word else "dot"
        elif word := _WORD_RE.match(src, pos):
            end = word.end()
            kind = {"true": "bool", "false": "bool", "nil": "nil"}.get(word.group(), "ident")
        else:
            _fail(src, pos, f"unexpected {ch!r} in action")
        self.toks.append(_Tok(kind, src[pos:end], pos, space))
        return end

    def _quoted_end(self, pos: int) -> int:
        i = pos + 1
        while i < len(self.src) and self.src[i] != "\n":
            if self.src[i] == '"':
                return i + 1
            i += 2 if self.src[i] == "\\" else 1
        _fail(self.src, pos, 'unterminated quoted string: expected a closing "')


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"'}
_ESCAPE_RE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", re.S)


def _unquote(src: str, tok: _Tok) -> str:
    """A double-quoted Go string literal's value."""

    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        if esc in _ESCAPES:
            return _ESCAPES[esc]
        code = int(esc[1:], 16) if esc[0] in "xuU" else int(esc, 8) if len(esc) == 3 else -1
        if not 0 <= code <= 0x10FFFF:
            _fail(src, tok.pos, f"invalid escape \\{esc} in string {tok.text}")
        return chr(code)

    return _ESCAPE_RE.sub(one, tok.text[1:-1])


def _number(src: str, tok: _Tok) -> int | float:
    clean = tok.text.replace("_", "")
    try:
        if re.fullmatch(r"[+-]?0[xXoObB].*", clean):
            return int(clean, 0)
        if re.fullmatch(r"[+-]?0\d+", clean):
            return int(clean, 8)
        return float(clean) if re.search(r"[.eE]", clean) else int(clean)
    except ValueError:
        _fail(src, tok.pos, f"bad number syntax: {tok.text!r}")


# ------------------------------------------------------------------------------------------------ AST


@dataclass(frozen=True)
class _Dot:
    pos: int


@dataclass(frozen=True)
class _Field:
    pos: int
    names: tuple[str, ...]


@dataclass(frozen=True)
class _Var:
    pos: int
    name: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class _Ident:
    pos: int
    name: str


@dataclass(frozen=True)
class _Const:
    pos: int
    value: Any
    text: str


@dataclass(frozen=True)
class _Chain:
    pos: int
    pipe: _Pipe
    names: tuple[str, ...]


_Operand = _Dot | _Field | _Var | _Ident | _Const | _Chain


@dataclass(frozen=True)
class _Command:
    args: tuple[_Operand, ...]


@dataclass(frozen=True)
class _Pipe:
    decls: tuple[str, ...]
    assign: bool
    cmds: tuple[_Command, ...]


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Action:
    pipe: _Pipe


@dataclass(frozen=True)
class _Control:
    kind: str  # if, with, range
    pos: int
    pipe: _Pipe
    body: tuple[_Node, ...]
    orelse: tuple[_Node, ...]


_Node = _Text | _Action | _Control


def _show(op: _Operand) -> str:
    """An operand as written, for messages."""
    chain = "".join("." + n for n in getattr(op, "names", ()))
    if isinstance(op, _Dot):
        return "."
    if isinstance(op, _Var):
        return op.name + chain
    if isinstance(op, _Chain):
        return "(...)" + chain
    if isinstance(op, _Field):
        return chain
    return op.name if isinstance(op, _Ident) else op.text


# --------------------------------------------------------------------------------------------- parser

_CONTROLS = frozenset({"if", "with", "range"})
_UNSUPPORTED = frozenset({"define", "template", "block", "break", "continue"})
_KEYWORDS = _CONTROLS | _UNSUPPORTED | {"else", "end"}


_EXPECTED = {"right": '"}}"', "rparen": '")"'}


def _describe(tok: _Tok) -> str:
    return {"eof": "end of template", "right": '"}}"'}.get(tok.kind, repr(tok.text))


class _Parser:
    """Recursive descent over the tokens; checks functions, variables and pipelines as Go's parser does."""

    def __init__(self, src: str, toks: list[_Tok]) -> None:
        self.src = src
        self.toks = toks
        self.i = 0
        self.scopes: list[set[str]] = [{"$"}]

    def fail(self, tok: _Tok, msg: str) -> NoReturn:
        _fail(self.src, tok.pos, msg)

    def next(self) -> _Tok:
        self.i += 1
        return self.toks[self.i - 1]

    def peek(self, ahead: int = 0) -> _Tok:
        return self.toks[min(self.i + ahead, len(self.toks) - 1)]

    def expect(self, kind: str, context: str) -> None:
        tok = self.next()
        if tok.kind != kind:
            self.fail(tok, f"unexpected {_describe(tok)} in {context}: expected {_EXPECTED[kind]}")

    def parse(self) -> tuple[_Node, ...]:
        nodes, stop = self.parse_list()
        if stop is not None:
            self.fail(stop, f"unexpected {{{{{stop.text}}}}}: no if, with or range is open")
        return nodes

    def parse_list(self) -> tuple[tuple[_Node, ...], _Tok | None]:
        """Nodes up to the end of the template or an ``else``/``end`` keyword (consumed and returned)."""
        self.scopes.append(set())
        nodes: list[_Node] = []
        stop = None
        while (tok := self.next()).kind != "eof":
            if tok.kind == "text":
                nodes.append(_Text(tok.text))
                continue
            head = self.peek()
            if head.kind == "ident" and head.text in ("else", "end"):
                stop = self.next()
                break
            nodes.append(self.parse_action(head))
        self.scopes.pop()
        return tuple(nodes), stop

    def parse_action(self, head: _Tok) -> _Node:
        if head.kind == "ident" and head.text in _UNSUPPORTED:
            self.fail(head, f"{{{{{head.text}}}}} is not supported in these templates")
        if head.kind == "ident" and head.text in _CONTROLS:
            self.next()
            return self.parse_control(head)
        return _Action(self.parse_pipeline("right", "action"))

    def parse_control(self, kw: _Tok) -> _Control:
        self.scopes.append(set())
        pipe = self.parse_pipeline("right", f"{{{{{kw.text}}}}}", ranging=kw.text == "range")
        body, stop = self.parse_list()
        orelse = self.parse_rest(kw, stop)
        self.scopes.pop()
        return _Control(kw.text, kw.pos, pipe, body, orelse)

    def parse_rest(self, kw: _Tok, stop: _Tok | None) -> tuple[_Node, ...]:
        """What follows a control's body: its else branch, through the closing ``{{end}}``."""
        orelse: tuple[_Node, ...] = ()
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
            opened = _where(self.src, kw.pos)
            self.fail(
                stop,
                f"unexpected {{{{{stop.text}}}}}: expected {{{{end}}}} for the {{{{{kw.text}}}}} at {opened}",
            )
        self.expect("right", "{{end}}")
        return orelse

    def parse_pipeline(self, end: str, context: str, ranging: bool = False) -> _Pipe:
        """Declarations and ``|``-separated commands up to the ``end`` token (consumed)."""
        decls, assign = self.parse_decls(ranging)
        cmds = [self.parse_command(context)]
        while (tok := self.next()).kind != end:
            if tok.kind != "pipe":
                self.fail(tok, f'unexpected {_describe(tok)} in {context}: expected {_EXPECTED[end]} or "|"')
            cmds.append(self.parse_command(context))
        for stage, cmd in enumerate(cmds[1:], start=2):
            head = cmd.args[0]
            if isinstance(head, _Dot | _Const):
                self.fail(
                    self.toks[self.i - 1],
                    f"non executable command in pipeline stage {stage}: "
                    f"{_show(head)} cannot receive the piped value; use a function",
                )
        return _Pipe(decls, assign, tuple(cmds))

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

    def check_var(self, tok: _Tok, name: str) -> None:
        if not any(name in scope for scope in self.scopes):
            self.fail(tok, f"undefined variable {name!r}: declare it first with {name} := ...")

    def parse_command(self, context: str) -> _Command:
        args: list[_Operand] = []
        while (tok := self.peek()).kind not in ("pipe", "right", "rparen", "eof"):
            if args and not tok.space:
                self.fail(tok, f"unexpected {_describe(tok)} in operand: separate arguments with spaces")
            args.append(self.parse_operand())
        if not args:
            self.fail(
                tok, f"missing command in {context}: expected a value or function before {_describe(tok)}"
            )
        return _Command(tuple(args))

    def parse_operand(self) -> _Operand:
        tok = self.next()
        if tok.kind == "field":
            return _Field(tok.pos, (tok.text[1:], *self.parse_chain()))
        if tok.kind == "var":
            self.check_var(tok, tok.text)
            return _Var(tok.pos, tok.text, self.parse_chain())
        if tok.kind == "lparen":
            pipe = self.parse_pipeline("rparen", "parenthesized pipeline")
            return _Chain(tok.pos, pipe, self.parse_chain())
        op = self.parse_term(tok)
        if (after := self.peek()).kind == "field" and not after.space:
            self.fail(
                after,
                f"unexpected {after.text} after {tok.text}: fields apply to the dot, "
                "a variable or a parenthesized pipeline",
            )
        return op

    def parse_term(self, tok: _Tok) -> _Dot | _Ident | _Const:
        if tok.kind == "dot":
            return _Dot(tok.pos)
        if tok.kind == "ident" and tok.text in _KEYWORDS:
            self.fail(tok, f"unexpected keyword {tok.text!r} in operand")
        if tok.kind == "ident":
            if tok.text not in _FUNCTION_NAMES:
                known = ", ".join(sorted(_FUNCTION_NAMES))
                self.fail(tok, f"function {tok.text!r} not defined (available: {known})")
            return _Ident(tok.pos, tok.text)
        values: dict[str, Callable[[], Any]] = {
            "string": lambda: _unquote(self.src, tok),
            "raw": lambda: tok.text[1:-1],
            "number": lambda: _number(self.src, tok),
            "bool": lambda: tok.text == "true",
            "nil": lambda: None,
        }
        if tok.kind not in values:
            self.fail(
                tok, f"unexpected {_describe(tok)} in operand: expected a value, field, variable or function"
            )
        return _Const(tok.pos, values[tok.kind](), tok.text)

    def parse_chain(self) -> tuple[str, ...]:
        names: list[str] = []
        while (tok := self.peek()).kind == "field" and not tok.space:
            names.append(tok.text[1:])
            self.i += 1
        return tuple(names)


# ------------------------------------------------------------------------------------------ functions


class _CallError(Exception):
    """A function rejected its arguments; the executor adds the position."""


def _go_type(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, Mapping):
        return "map[string]interface {}"
    if isinstance(value, list | tuple):
        return "[]interface {}"
    names = {bool: "bool", int: "int", float: "float64", str: "string"}
    return names.get(type(value), type(value).__name__)


def _truth(value: Any) -> bool:
    """Go's truth: false, 0, nil, no value and empty strings, lists and maps are false."""
    if value is None or value is _MISSING:
        return False
    if isinstance(value, str | list | tuple | Mapping):
        return len(value) > 0
    return bool(value) if isinstance(value, int | float) else True


def _go_float(value: float) -> str:
    """``%v`` of a float64: the shortest digits, in exponent form outside [1e-4, 1e6) as Go's ``%g``."""
    if math.isinf(value) or math.isnan(value):
        return "NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"
    number = Decimal(repr(value)).normalize()
    sign, digits, exponent = number.as_tuple()
    power = len(digits) - 1 + int(exponent)
    if value == 0 or -4 <= power < 6:
        return format(number, "f")
    mantissa = "".join(map(str, digits))
    mantissa = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"


def _fmt(value: Any) -> str:
    """Go's ``%v`` of JSON-like data."""
    if value is None or value is _MISSING:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{_fmt(k)}:{_fmt(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(map(_fmt, value)) + "]"
    return str(value)


_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _quote(text: str) -> str:
    """Go's ``strconv.Quote``."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(
                f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
    return "".join(out) + '"'


def _verb(verb: str, value: Any, precision: str | None) -> str:
    """One ``printf`` verb applied to one argument; a mismatch reads ``%!d(string=x)`` as in Go."""
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if verb == "v":
        return _fmt(value)
    if verb == "s" and isinstance(value, str):
        return value[: int(precision)] if precision is not None else value
    if verb == "q" and isinstance(value, str):
        return _quote(value)
    if (verb == "d" and is_int) or (verb == "t" and isinstance(value, bool)):
        return _fmt(value)
    if verb in "xX" and (is_int or isinstance(value, str)):
        text = format(value, "x") if is_int else value.encode().hex()
        return text.upper() if verb == "X" else text
    if verb == "f" and isinstance(value, float):
        return format(value, f".{6 if precision is None else int(precision)}f")
    if isinstance(value, list | tuple):
        return "[" + " ".join(_verb(verb, item, precision) for item in value) + "]"
    if value is None:
        return f"%!{verb}(<nil>)"
    return f"%!{verb}({_go_type(value)}={_fmt(value)})"


def _pad(text: str, flags: str, width: str | None) -> str:
    if width is None:
        return text
    size = int(width)
    if "-" in flags:
        return text.ljust(size)
    if "0" in flags and text[:1] in ("-", "+"):
        return text[0] + text[1:].rjust(size - 1, "0")
    return text.rjust(size, "0" if "0" in flags else " ")


_VERB_RE = re.compile(r"%([-0]*)(\d+)?(?:\.(\d+))?([vsqdtxXf%])")


def _printf(fmt: str, *args: Any) -> str:
    out: list[str] = []
    pos = used = 0
    for match in _VERB_RE.finditer(fmt):
        out.append(fmt[pos : match.start()])
        pos = match.end()
        flags, width, precision, verb = match.groups()
        if verb == "%":
            out.append("%")
        elif used >= len(args):
            out.append(f"%!{verb}(MISSING)")
        else:
            out.append(_pad(_verb(verb, args[used], precision), flags, width))
            used += 1
    out.append(fmt[pos:])
    if used < len(args):
        out.append("%!(EXTRA " + ", ".join(f"{_go_type(a)}={_fmt(a)}" for a in args[used:]) + ")")
    return "".join(out)


def _print(*args: Any) -> str:
    """Go's ``fmt.Sprint``: a space between operands when neither is a string."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if i and not isinstance(arg, str) and not isinstance(args[i - 1], str):
            out.append(" ")
        out.append(_fmt(arg))
    return "".join(out)


def sha3sum(value: str) -> str:
    """The hex SHA3-256 digest of ``value``."""
    return hashlib.sha3_256(value.encode()).hexdigest()


def short_hash(value: str) -> str:
    """The first 20 hex characters of the SHA-1 of ``value`` (api-syncagent's ``shortHash``)."""
    return hashlib.sha1(value.encode(), usedforsecurity=False).hexdigest()[:20]


def _sha3short(value: str, *lengths: int) -> str:
    if len(lengths) > 1:
        raise _CallError(f"expected at most one length argument, got {len(lengths)}")
    length = lengths[0] if lengths else 20
    if length <= 0:
        raise _CallError(f"invalid length {length}: must be positive")
    return sha3sum(value)[:length]


def _len(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, list | tuple | Mapping):
        return len(value)
    raise _CallError(f"len of {_go_type(value)}: expected a string, list or map")


def _join(sep: str, value: Any) -> str:
    """sprig's ``join sep list``: nil items are skipped, a non-list joins as its one item."""
    if value is None:
        return ""
    items = value if isinstance(value, list | tuple) else [value]
    return sep.join(_fmt(item) for item in items if item is not None)


def _default(fallback: Any, *given: Any) -> Any:
    """sprig's ``default fallback value``: the value when it is not empty, else the fallback."""
    return given[0] if given and _truth(given[0]) else fallback


def _kind(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, list | tuple | Mapping):
        return "other"
    return "int" if type(value) is int else _go_type(value)


def _eq(first: Any, *others: Any) -> bool:
    """Go's ``eq``: whether ``first`` equals any of the others; values of different kinds are an error."""
    if not others:
        raise _CallError("missing argument for comparison")
    if _kind(first) == "other":
        raise _CallError(f"invalid type for comparison: {_go_type(first)}")
    for other in others:
        if _kind(other) == _kind(first):
            if other == first:
                return True
        elif first is not None and other is not None:
            raise _CallError(f"incompatible types for comparison: {_go_type(first)} and {_go_type(other)}")
    return False


@dataclass(frozen=True)
class _Func:
    """A template function and its Go signature (``string``, ``int`` or ``any`` per parameter)."""

    impl: Callable[..., Any]
    params: tuple[str, ...]
    variadic: str | None = None

    def call(self, args: Sequence[Any]) -> Any:
        want = len(self.params)
        if len(args) < want or (self.variadic is None and len(args) > want):
            least = "at least " if self.variadic else ""
            raise _CallError(f"wrong number of args: want {least}{want} got {len(args)}")
        for i, arg in enumerate(args):
            kind = self.params[i] if i < want else self.variadic
            if not _accepts(kind, arg):
                hint = " (a missing field?)" if arg is None else ""
                raise _CallError(
                    f"wrong type for argument {i + 1}: expected {kind}, got {_go_type(arg)}{hint}"
                )
        return self.impl(*args)


def _accepts(kind: str | None, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "int":
        return type(value) is int
    return True


_FUNCTIONS: dict[str, _Func] = {
    "sha3sum": _Func(sha3sum, ("string",)),
    "sha3short": _Func(_sha3short, ("string",), "int"),
    "shortHash": _Func(short_hash, ("string",)),
    "lower": _Func(str.lower, ("string",)),
    "upper": _Func(str.upper, ("string",)),
    "trim": _Func(str.strip, ("string",)),
    "len": _Func(_len, ("any",)),
    "list": _Func(lambda *items: list(items), (), "any"),
    "join": _Func(_join, ("string", "any")),
    "default": _Func(_default, ("any",), "any"),
    "eq": _Func(_eq, ("any",), "any"),
    "ne": _Func(lambda a, b: not _eq(a, b), ("any", "any")),
    "not": _Func(lambda value: not _truth(value), ("any",)),
    "printf": _Func(_printf, ("string",), "any"),
    "print": _Func(_print, (), "any"),
}
_LAZY = frozenset({"and", "or"})  # evaluate their arguments only as far as needed, as Go does
_FUNCTION_NAMES = frozenset(_FUNCTIONS) | _LAZY


# ------------------------------------------------------------------------------------------- executor


def _arg(value: Any) -> Any:
    """A value as a function receives it: no value becomes nil."""
    return None if value is _MISSING else value


class _Exec:
    """One rendering: the output so far and the variable stack."""

    def __init__(self, src: str, data: Mapping[str, Any]) -> None:
        self.src = src
        self.vars: list[tuple[str, Any]] = [("$", data)]
        self.out: list[str] = []

    def fail(self, pos: int, msg: str) -> NoReturn:
        _fail(self.src, pos, msg)

    def walk(self, nodes: tuple[_Node, ...], dot: Any) -> None:
        for node in nodes:
            if isinstance(node, _Text):
                self.out.append(node.text)
            elif isinstance(node, _Action):
                value = self.pipe(node.pipe, dot)
                if not node.pipe.decls:
                    self.out.append("<no value>" if value is None or value is _MISSING else _fmt(value))
            elif node.kind == "range":
                self.range(node, dot)
            else:
                self.branch(node, dot)

    def branch(self, node: _Control, dot: Any) -> None:
        mark = len(self.vars)
        value = self.pipe(node.pipe, dot)
        if _truth(value):
            self.walk(node.body, value if node.kind == "with" else dot)
        else:
            self.walk(node.orelse, dot)
        del self.vars[mark:]

    def range(self, node: _Control, dot: Any) -> None:
        mark = len(self.vars)
        value = self.pipe(node.pipe, dot, declare=False)
        items = self.items(node, value)
        for key, elem in items:
            decls = node.pipe.decls
            for name, bound in zip(decls, (key, elem)[2 - len(decls) :], strict=True):
                self.bind(name, bound, node.pipe.assign)
            self.walk(node.body, elem)
            del self.vars[mark:]
        if not items:
            self.walk(node.orelse, dot)

    def items(self, node: _Control, value: Any) -> list[tuple[Any, Any]]:
        if value is None or value is _MISSING:
            return []
        if isinstance(value, Mapping):
            return [(key, value[key]) for key in sorted(value)]
        if isinstance(value, list | tuple):
            return list(enumerate(value))
        if type(value) is int and len(node.pipe.decls) < 2:
            return [(i, i) for i in range(value)]
        self.fail(
            node.pos, f"range can't iterate over {_fmt(value)} ({_go_type(value)}): expected a list or map"
        )

    def bind(self, name: str, value: Any, assign: bool) -> None:
        if not assign:
            self.vars.append((name, value))
            return
        index = max(i for i, (known, _) in enumerate(self.vars) if known == name)
        self.vars[index] = (name, value)

    def lookup(self, name: str) -> Any:
        return next(value for known, value in reversed(self.vars) if known == name)

    def pipe(self, pipe: _Pipe, dot: Any, declare: bool = True) -> Any:
        value: Any = _UNSET
        for cmd in pipe.cmds:
            value = self.command(cmd, dot, value)
        if declare:
            for name in pipe.decls:
                self.bind(name, value, pipe.assign)
        return value

    def command(self, cmd: _Command, dot: Any, final: Any) -> Any:
        head, rest = cmd.args[0], cmd.args[1:]
        if isinstance(head, _Ident):
            return self.call(head, rest, dot, final)
        if rest or final is not _UNSET:
            self.fail(head.pos, f"{_show(head)} is not a function and cannot take arguments")
        if isinstance(head, _Const) and head.value is None:
            self.fail(head.pos, "nil is not a command")
        return self.operand(head, dot)

    def operand(self, op: _Operand, dot: Any) -> Any:
        if isinstance(op, _Dot):
            return dot
        if isinstance(op, _Const):
            return op.value
        if isinstance(op, _Ident):
            return self.call(op, (), dot, _UNSET)
        receiver = dot
        if isinstance(op, _Var):
            receiver = self.lookup(op.name)
        elif isinstance(op, _Chain):
            receiver = self.pipe(op.pipe, dot)
        for name in op.names:
            receiver = self.field(receiver, name, op.pos)
        return receiver

    def arg(self, op: _Operand, dot: Any) -> Any:
        return _arg(self.operand(op, dot))

    def field(self, receiver: Any, name: str, pos: int) -> Any:
        if receiver is _MISSING:
            return _MISSING
        if isinstance(receiver, Struct):
            if name not in receiver:
                self.fail(
                    pos, f"can't evaluate field {name}: the data has only {', '.join(sorted(receiver))}"
                )
            return receiver[name]
        if isinstance(receiver, Mapping):
            return receiver.get(name, _MISSING)
        if receiver is None:
            self.fail(pos, f"nil pointer evaluating interface {{}}.{name}")
        self.fail(pos, f"can't evaluate field {name} in type {_go_type(receiver)}")

    def call(self, ident: _Ident, ops: tuple[_Operand, ...], dot: Any, final: Any) -> Any:
        thunks: list[Callable[[], Any]] = [partial(self.arg, op, dot) for op in ops]
        if final is not _UNSET:
            thunks.append(partial(_arg, final))
        try:
            if ident.name in _LAZY:
                return _logic(ident.name, thunks)
            return _FUNCTIONS[ident.name].call([get() for get in thunks])
        except _CallError as err:
            self.fail(ident.pos, f"error calling {ident.name}: {err}")


def _logic(name: str, thunks: list[Callable[[], Any]]) -> Any:
    """``and``/``or``: the first argument that decides, else the last; the rest stay unevaluated."""
    if not thunks:
        raise _CallError("wrong number of args: want at least 1 got 0")
    value = None
    for get in thunks:
        value = get()
        if _truth(value) == (name == "or"):
            return value
    return value


# ---------------------------------------------------------------------------------------------- API


class Template:
    """A compiled template."""

    def __init__(self, source: str, nodes: tuple[_Node, ...]) -> None:
        self.source = source
        self._nodes = nodes

    def render(self, data: Mapping[str, Any]) -> str:
        """Execute with ``data`` as the dot; raises :class:`TemplateError` on runtime errors."""
        run = _Exec(self.source, data)
        run.walk(self._nodes, data)
        return "".join(run.out)


def compile_template(text: str) -> Template:
    """Parse ``text``; bad syntax, unknown functions and undefined variables raise :class:`TemplateError`."""
    return Template(text, _Parser(text, _Lexer(text).run()).parse())
