"""Label and field selectors with the syntax and semantics of Kubernetes' apimachinery.

Label selectors: ``=``, ``==``, ``!=``, ``in (a,b)``, ``notin (a,b)``, ``key`` (exists), ``!key``
(does not exist); commas AND requirements together. ``gt``/``lt`` (``key>1``) are not supported.
Field selectors: ``=``, ``==``, ``!=`` over dotted paths the caller supports; ``\\,``, ``\\=`` and
``\\\\`` escape those characters inside values.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from syncflow.util import names


class SelectorError(ValueError):
    """A selector that does not parse, worded as kube-apiserver words it."""


class Op(enum.Enum):
    """A requirement's operator, valued by its string spelling."""

    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


_BINARY_OPS = "in, notin, =, ==, !=, gt, lt"
_SET_OPS = (Op.IN, Op.NOT_IN)
_EXACT_OPS = (Op.EQUALS, Op.DOUBLE_EQUALS, Op.NOT_EQUALS)


@dataclass(frozen=True)
class Requirement:
    """One ``key op values`` term; ``values`` is sorted and unique."""

    key: str
    op: Op
    values: tuple[str, ...] = ()

    @classmethod
    def new(cls, key: str, op: Op, values: Collection[str] = ()) -> Requirement:
        """Build a requirement, validating key, values and arity as ``labels.NewRequirement`` does."""
        for msg in names.qualified_name(key):
            raise SelectorError(f'invalid label key "{key}": {msg}')
        if op in _SET_OPS and not values:
            raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        if op in _EXACT_OPS and len(set(values)) != 1:
            raise SelectorError("exact-match compatibility requires one single value")
        if op in (Op.EXISTS, Op.DOES_NOT_EXIST) and values:
            raise SelectorError("values set must be empty for exists and does not exist")
        for value in values:
            for msg in names.label_value(value):
                raise SelectorError(f'invalid label value: "{value}": at key: "{key}": {msg}')
        return cls(key, op, tuple(sorted(set(values))))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies this requirement (absent keys satisfy ``!=`` and ``notin``)."""
        present = self.key in labels
        if self.op is Op.EXISTS:
            return present
        if self.op is Op.DOES_NOT_EXIST:
            return not present
        if self.op in (Op.EQUALS, Op.DOUBLE_EQUALS, Op.IN):
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values

    def __str__(self) -> str:
        if self.op is Op.EXISTS:
            return self.key
        if self.op is Op.DOES_NOT_EXIST:
            return "!" + self.key
        if self.op in _SET_OPS:
            return f"{self.key} {self.op.value} ({','.join(self.values)})"
        return f"{self.key}{self.op.value}{self.values[0]}"


# --- label selector string syntax -------------------------------------------------------------

_IDENT, _EOS = "identifier", "end of string"
_SYMBOLS = ("!=", "==", "=", "!", "(", ")", ",")
_SPECIAL_CHARS = frozenset("!=(),<>")


@dataclass(frozen=True)
class _Token:
    kind: str  # _IDENT, _EOS, or the symbol itself
    text: str


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        symbol = next((s for s in _SYMBOLS if text.startswith(s, i)), None)
        if symbol is not None:
            out.append(_Token(symbol, symbol))
            i += len(symbol)
            continue
        if ch in "<>":
            out.append(_Token(ch, ch))
            i += 1
            continue
        start = i
        while i < len(text) and not text[i].isspace() and text[i] not in _SPECIAL_CHARS:
            i += 1
        out.append(_Token(_IDENT, text[start:i]))
    out.append(_Token(_EOS, ""))
    return out


class _Parser:
    """Recursive-descent parser over the token list; ``in``/``notin`` are keywords only as operators."""

    def __init__(self, text: str) -> None:
        self._toks = _tokens(text)
        self._pos = 0

    def _peek(self) -> _Token:
        return self._toks[self._pos]

    def _next(self) -> _Token:
        tok = self._toks[self._pos]
        if tok.kind != _EOS:
            self._pos += 1
        return tok

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok = self._peek()
            if tok.kind == _EOS:
                return reqs
            if tok.kind not in (_IDENT, "!"):
                raise SelectorError(f"found '{tok.text}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self._requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            after = self._next()
            if after.kind == _EOS:
                return reqs
            if after.kind != ",":
                raise SelectorError(f"found '{after.text}', expected: ',' or 'end of string'")
            following = self._peek()
            if following.kind not in (_IDENT, "!"):
                raise SelectorError(f"found '{following.text}', expected: identifier after ','")

    def _requirement(self) -> Requirement:
        negated = self._peek().kind == "!"
        if negated:
            self._next()
        key_tok = self._next()
        if key_tok.kind != _IDENT:
            raise SelectorError(f"found '{key_tok.text}', expected: identifier")
        if negated or self._peek().kind in (_EOS, ","):
            return Requirement.new(key_tok.text, Op.DOES_NOT_EXIST if negated else Op.EXISTS)
        op = self._operator()
        values = self._set_values() if op in _SET_OPS else self._exact_value()
        return Requirement.new(key_tok.text, op, values)

    def _operator(self) -> Op:
        tok = self._next()
        ops = {"=": Op.EQUALS, "==": Op.DOUBLE_EQUALS, "!=": Op.NOT_EQUALS}
        if tok.kind in ops:
            return ops[tok.kind]
        if tok.kind == _IDENT and tok.text in ("in", "notin"):
            return Op(tok.text)
        raise SelectorError(f"found '{tok.text}', expected: {_BINARY_OPS}")

    def _exact_value(self) -> list[str]:
        if self._peek().kind in (_EOS, ","):
            return [""]
        tok = self._next()
        if tok.kind != _IDENT:
            raise SelectorError(f"found '{tok.text}', expected: identifier")
        return [tok.text]

    def _set_values(self) -> list[str]:
        tok = self._next()
        if tok.kind != "(":
            raise SelectorError(f"found '{tok.text}' expected: '('")
        values: list[str] = []
        expect_value = True
        while True:
            tok = self._next()
            if tok.kind == ")":
                if expect_value and values:
                    values.append("")  # "(a,)" carries an empty value, as in kube
                return values or [""]
            if tok.kind == ",":
                if expect_value:
                    values.append("")
                expect_value = True
            elif tok.kind == _IDENT and expect_value:
                values.append(tok.text)
                expect_value = False
            else:
                raise SelectorError(f"found '{tok.text}', expected: ',', ')' or identifier")


@dataclass(frozen=True)
class LabelSelector:
    """A conjunction of label requirements; no requirements selects everything."""

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse the string form (``a=b,c in (d,e),!f``); the empty string selects everything."""
        reqs = _Parser(text).parse()
        return cls(tuple(sorted(reqs, key=lambda r: r.key)))

    @classmethod
    def from_dict(cls, selector: Mapping[str, Any] | None) -> LabelSelector:
        """Convert a ``metav1.LabelSelector`` (``matchLabels`` and ``matchExpressions``).

        ``None`` and ``{}`` both select everything. (apimachinery's ``LabelSelectorAsSelector``
        maps a nil selector to *nothing*; callers that need that distinction check for ``None``.)
        """
        if not selector:
            return cls()
        reqs = [Requirement.new(k, Op.EQUALS, [v]) for k, v in (selector.get("matchLabels") or {}).items()]
        reqs.extend(_expression(expr) for expr in selector.get("matchExpressions") or [])
        return cls(tuple(sorted(reqs, key=lambda r: r.key)))

    @property
    def empty(self) -> bool:
        """Whether this selector selects everything."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether every requirement holds for ``labels``."""
        return all(r.matches(labels) for r in self.requirements)

    def __iter__(self) -> Iterator[Requirement]:
        return iter(self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


_EXPRESSION_OPS = {"In": Op.IN, "NotIn": Op.NOT_IN, "Exists": Op.EXISTS, "DoesNotExist": Op.DOES_NOT_EXIST}


def _expression(expr: Mapping[str, Any]) -> Requirement:
    operator = expr.get("operator", "")
    op = _EXPRESSION_OPS.get(operator)
    if op is None:
        raise SelectorError(f'"{operator}" is not a valid label selector operator')
    return Requirement.new(str(expr.get("key", "")), op, list(expr.get("values") or []))


# --- field selectors --------------------------------------------------------------------------

_FIELD_OPS = (("!=", Op.NOT_EQUALS), ("==", Op.DOUBLE_EQUALS), ("=", Op.EQUALS))


@dataclass(frozen=True)
class FieldTerm:
    """``field op value`` where ``op`` is ``=``, ``==`` or ``!=``."""

    field: str
    op: Op
    value: str

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Compare the field's value (missing = ``""``) with ``value``."""
        equal = field_value(obj, self.field) == self.value
        return not equal if self.op is Op.NOT_EQUALS else equal

    def __str__(self) -> str:
        return f"{self.field}{self.op.value}{_escape(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """A conjunction of field terms; no terms selects everything."""

    terms: tuple[FieldTerm, ...] = ()

    @classmethod
    def parse(cls, text: str, supported: Collection[str]) -> FieldSelector:
        """Parse ``a=b,c!=d``; a field outside ``supported`` raises ``field label not supported``.

        Whitespace around fields and values is ignored (kube-apiserver keeps it and rejects the
        field).
        """
        terms = [_field_term(raw, text) for raw in _split_unescaped(text, ",") if raw.strip()]
        for term in terms:
            if term.field not in supported:
                raise SelectorError(f"field label not supported: {term.field}")
        return cls(tuple(terms))

    @property
    def empty(self) -> bool:
        """Whether this selector selects everything."""
        return not self.terms

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether every term holds for ``obj``."""
        return all(t.matches(obj) for t in self.terms)

    def __str__(self) -> str:
        return ",".join(str(t) for t in self.terms)


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string value at a dotted path (``""`` when missing; booleans as ``true``/``false``)."""
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return ""
        node = node[part]
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def _field_term(raw: str, selector: str) -> FieldTerm:
    # Like fields.ParseSelector: the first operator found splits the term; only the value unescapes.
    for i in range(len(raw)):
        for symbol, op in _FIELD_OPS:
            if raw.startswith(symbol, i):
                return FieldTerm(raw[:i].strip(), op, _unescape(raw[i + len(symbol) :].strip()))
    raise SelectorError(f"invalid selector: '{selector}'; can't understand '{raw}'")


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            current.append("\\" + ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if escaped:
        current.append("\\")
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: {value}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {value}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError(f"invalid field selector: invalid escape sequence: {value}")
    return "".join(out)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
