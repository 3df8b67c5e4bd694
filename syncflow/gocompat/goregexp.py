"""Go's ``regexp`` package on RE2 (google-re2): the same syntax and linear-time matching, and Go's rules
for iterating matches (an empty match right after a match is skipped), ``$1``/``${name}`` expansion,
``ReplaceAll``, ``FindAll`` and ``Split``. User-supplied patterns never go to Python's ``re``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_NAME_RE = re.compile(r"\$(?:\{(\w+)\}|(\w+)|(\$))")


class RegexpError(ValueError):
    """A pattern RE2 (and so Go) cannot compile."""


@dataclass(frozen=True)
class Regexp:
    """A compiled pattern with Go's matching methods."""

    pattern: str
    compiled: Any

    def matches(self, text: str) -> list[Any]:
        """Every match as Go's ``FindAll`` (n < 0) iterates them."""
        return self._all(text, -1)

    def _all(self, text: str, n: int) -> list[Any]:
        found: list[Any] = []
        pos, prev_end = 0, -1
        while (n < 0 or len(found) < n) and pos <= len(text):
            match = self.compiled.search(text, pos)
            if match is None:
                break
            start, end = match.span()
            accept = True
            if end == start:
                accept = start != prev_end
                pos = end + 1
            else:
                pos = end
            prev_end = end
            if accept:
                found.append(match)
        return found

    def match_string(self, text: str) -> bool:
        """``MatchString``."""
        return self.compiled.search(text) is not None

    def find_string(self, text: str) -> str:
        """``FindString``: the leftmost match, or ""."""
        match = self.compiled.search(text)
        return match.group() if match else ""

    def find_all_string(self, text: str, n: int) -> list[str] | None:
        """``FindAllString``: None (Go's nil) when nothing matches."""
        if n == 0:
            return None
        return [m.group() for m in self._all(text, n)] or None

    def replace_all(self, text: str, replacement: str, literal: bool = False) -> str:
        """``ReplaceAllString`` (``$1``, ``${name}``, ``$$``) or ``ReplaceAllLiteralString``."""
        out: list[str] = []
        last_end, search = 0, 0
        while search <= len(text):
            match = self.compiled.search(text, search)
            if match is None:
                break
            start, end = match.span()
            out.append(text[last_end:start])
            if end > last_end or start == 0:
                out.append(replacement if literal else self._expand(replacement, match))
            last_end = end
            search = search + 1 if search + 1 > end else end
        out.append(text[last_end:])
        return "".join(out)

    def _expand(self, template: str, match: Any) -> str:
        """Go's ``Regexp.Expand``: ``$name`` takes the longest run of word characters; unknown → ""."""

        def one(ref: re.Match[str]) -> str:
            if ref.group(3):
                return "$"
            name = ref.group(1) or ref.group(2)
            if name.isdigit():
                index = int(name)
                return (match.group(index) or "") if index <= self.compiled.groups else ""
            if name in self.compiled.groupindex:
                return match.group(name) or ""
            return ""

        parts, pos = [], 0
        for ref in _NAME_RE.finditer(template):
            parts.append(template[pos : ref.start()])
            parts.append(one(ref))
            pos = ref.end()
        parts.append(template[pos:])
        return "".join(parts)

    def split(self, text: str, n: int) -> list[str] | None:
        """``Split``: at most ``n`` pieces (n < 0: all; 0: nil)."""
        if n == 0:
            return None
        if self.pattern and not text:
            return [""]
        pieces: list[str] = []
        begin = end = 0
        for match in self._all(text, n):
            if n > 0 and len(pieces) == n - 1:
                break
            end = match.start()
            if match.end() != 0:
                pieces.append(text[begin:end])
            begin = match.end()
        if end != len(text):
            pieces.append(text[begin:])
        return pieces


@lru_cache(maxsize=256)
def compile_regexp(pattern: str) -> Regexp:
    """Compile ``pattern`` with RE2; raises :class:`RegexpError` with RE2's reason."""
    if "\\C" in pattern.replace("\\\\", ""):
        raise RegexpError(f"error parsing regexp: invalid escape sequence: `\\C` in {pattern!r}")
    try:
        return Regexp(pattern, re2.compile(pattern, _OPTIONS))
    except re2.error as err:
        reason = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else str(err)
        raise RegexpError(f"error parsing regexp {pattern!r}: {reason}") from None


def quote_meta(text: str) -> str:
    """Go's ``regexp.QuoteMeta``."""
    return "".join("\\" + ch if ch in "\\.+*?()|[]{}^$" else ch for ch in text)
