"""``regex{path, pattern, replacement}``: the value at path, coalesced to a string, with every match of
the RE2 pattern replaced (Go's ``ReplaceAllString``: ``$1``, ``${name}``); an empty pattern sets the
value to the replacement."""

from __future__ import annotations

from syncflow.gocompat.goregexp import RegexpError, compile_regexp
from syncflow.mutation import gjson, paths
from syncflow.mutation.base import Context, MutationError, Obj


class Regex:
    """Rewrites the value at ``path`` as a string."""

    def __init__(self, path: str, pattern: str | None, replacement: str | None) -> None:
        self.path = paths.parse(path)
        self.replacement = replacement or ""
        try:
            self.regexp = compile_regexp(pattern) if pattern else None
        except RegexpError as err:
            raise MutationError(f"invalid pattern {pattern!r}: {err}") from None

    def apply(self, obj: Obj, context: Context) -> Obj:
        if self.regexp is None:
            value = self.replacement
        else:
            value = self.regexp.replace_all(gjson.string(*paths.get(obj, self.path)), self.replacement)
        result: Obj = paths.set_value(obj, self.path, value)
        return result
