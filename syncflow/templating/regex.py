"""sprig's regular-expression functions, with Go's RE2 semantics (:mod:`syncflow.gocompat.goregexp`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from syncflow.gocompat.goregexp import Regexp, RegexpError, compile_regexp, quote_meta
from syncflow.templating.errors import CallError
from syncflow.templating.func import Func


def _with(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Compile the pattern (first argument); a bad pattern is a template error, as sprig panics."""

    def call(pattern: str, *args: Any) -> Any:
        try:
            regexp = compile_regexp(pattern)
        except RegexpError as err:
            raise CallError(f"regexp: Compile({pattern!r}): {err}") from None
        return fn(regexp, *args)

    return call


def _match(regexp: Regexp, text: str) -> bool:
    return regexp.match_string(text)


def _match_or_false(pattern: str, text: str) -> bool:
    """sprig's ``regexMatch`` ignores a bad pattern and answers false (``mustRegexMatch`` errors)."""
    try:
        return compile_regexp(pattern).match_string(text)
    except RegexpError:
        return False


def _find_all(regexp: Regexp, text: str, n: int) -> list[str]:
    return regexp.find_all_string(text, n) or []


def _split(regexp: Regexp, text: str, n: int) -> list[str]:
    return regexp.split(text, n) or []


def _replace(regexp: Regexp, text: str, replacement: str) -> str:
    return regexp.replace_all(text, replacement)


def _replace_literal(regexp: Regexp, text: str, replacement: str) -> str:
    return regexp.replace_all(text, replacement, literal=True)


_FNS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "regexMatch": (_match, ("string", "string")),
    "regexFind": (Regexp.find_string, ("string", "string")),
    "regexFindAll": (_find_all, ("string", "string", "int")),
    "regexReplaceAll": (_replace, ("string", "string", "string")),
    "regexReplaceAllLiteral": (_replace_literal, ("string", "string", "string")),
    "regexSplit": (_split, ("string", "string", "int")),
}

FUNCTIONS: dict[str, Func] = {
    **{name: Func(_with(fn), params) for name, (fn, params) in _FNS.items()},
    **{"must" + name[0].upper() + name[1:]: Func(_with(fn), params) for name, (fn, params) in _FNS.items()},
    "regexMatch": Func(_match_or_false, ("string", "string")),
    "regexQuoteMeta": Func(quote_meta, ("string",)),
}
