"""Splits a template into text and action tokens (Go's ``text/template/parse`` lexer), and reads literals."""

from __future__ import annotations

import re
from dataclasses import dataclass

from syncflow.templating.errors import fail

SPACE = " \t\r\n"


@dataclass(frozen=True)
class Tok:
    kind: str
    text: str
    pos: int
    space: bool = False  # whitespace precedes it inside the action


_NUMBER_RE = re.compile(
    r"[+-]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)"
)
_WORD_RE = re.compile(r"\w+")
_PUNCT = {"|": "pipe", "(": "lparen", ")": "rparen", ",": "comma", "=": "assign"}


class Lexer:
    """Splits a template into text and action tokens, applying trim markers to the text."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.toks: list[Tok] = []
        self.trim_next = False

    def run(self) -> list[Tok]:
        pos = 0
        while (start := self.src.find("{{", pos)) >= 0:
            inner = start + 2
            trim = self.src.startswith("-", inner) and self.src[inner + 1 : inner + 2] in tuple(SPACE)
            self._text(pos, start, trim)
            inner += 2 if trim else 0
            if self.src.startswith("/*", inner):
                pos = self._comment(start, inner + 2)
            else:
                pos = self._action(start, inner)
        self._text(pos, len(self.src), False)
        self.toks.append(Tok("eof", "", len(self.src)))
        return self.toks

    def _text(self, start: int, end: int, trim_right: bool) -> None:
        text = self.src[start:end]
        if self.trim_next:
            text = text.lstrip(SPACE)
        if trim_right:
            text = text.rstrip(SPACE)
        self.trim_next = False
        if text:
            self.toks.append(Tok("text", text, start))

    def _close(self, pos: int) -> int | None:
        """The end of a right delimiter at ``pos`` (noting a trim marker), or None."""
        if self.src.startswith("}}", pos):
            return pos + 2
        if self.src[pos : pos + 1] in tuple(SPACE) and self.src.startswith("-}}", pos + 1):
            self.trim_next = True
            return pos + 4
        return None

    def _comment(self, start: int, pos: int) -> int:
        end = self.src.find("*/", pos)
        if end < 0:
            fail(self.src, start, 'unclosed comment: expected "*/}}"')
        close = self._close(end + 2)
        if close is None:
            fail(
                self.src,
                end,
                'comment ends before the closing delimiter: expected "*/}}" with nothing between',
            )
        return close

    def _action(self, start: int, pos: int) -> int:
        self.toks.append(Tok("left", "{{", start))
        space = True
        while True:
            if pos >= len(self.src):
                fail(self.src, start, 'unclosed action: expected "}}"')
            close = self._close(pos)
            if close is not None:
                self.toks.append(Tok("right", "}}", pos))
                return close
            if self.src[pos] in SPACE:
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
                fail(src, pos, "unterminated raw string: expected a closing backtick")
        elif number := _NUMBER_RE.match(src, pos):
            kind, end = "number", number.end()
            if end < len(src) and (src[end].isalnum() or src[end] in "_."):
                fail(src, pos, f"bad number syntax: {src[pos : end + 1]!r}")
        elif ch in "$.":
            word = _WORD_RE.match(src, pos + 1)
            end = word.end() if word else pos + 1
            kind = "var" if ch == "$" else "field" if word else "dot"
        elif word := _WORD_RE.match(src, pos):
            end = word.end()
            kind = {"true": "bool", "false": "bool", "nil": "nil"}.get(word.group(), "ident")
        else:
            fail(src, pos, f"unexpected {ch!r} in action")
        self.toks.append(Tok(kind, src[pos:end], pos, space))
        return end

    def _quoted_end(self, pos: int) -> int:
        i = pos + 1
        while i < len(self.src) and self.src[i] != "\n":
            if self.src[i] == '"':
                return i + 1
            i += 2 if self.src[i] == "\\" else 1
        fail(self.src, pos, 'unterminated quoted string: expected a closing "')


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"'}
_ESCAPE_RE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", re.S)


def unquote(src: str, tok: Tok) -> str:
    """A double-quoted Go string literal's value."""

    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        if esc in _ESCAPES:
            return _ESCAPES[esc]
        code = int(esc[1:], 16) if esc[0] in "xuU" else int(esc, 8) if len(esc) == 3 else -1
        if not 0 <= code <= 0x10FFFF:
            fail(src, tok.pos, f"invalid escape \\{esc} in string {tok.text}")
        return chr(code)

    return _ESCAPE_RE.sub(one, tok.text[1:-1])


def number(src: str, tok: Tok) -> int | float:
    clean = tok.text.replace("_", "")
    try:
        if re.fullmatch(r"[+-]?0[xXoObB].*", clean):
            return int(clean, 0)
        if re.fullmatch(r"[+-]?0\d+", clean):
            return int(clean, 8)
        return float(clean) if re.search(r"[.eE]", clean) else int(clean)
    except ValueError:
        fail(src, tok.pos, f"bad number syntax: {tok.text!r}")
