"""What a viewer may see (``Scope``: ``--workspaces``) and what a list asks for (``Filters``), as
Redis glob patterns on the key grammar ``<verb>/<rule>/<cluster>/<namespace>/<name>``
(``syncflow.queue.keys``). Each part of a key is free of ``/``, and so is every filter value, so a
``*`` in one part of a pattern never reaches into another."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from syncflow.console.models import STATES, State

_GLOB = frozenset("*?[")
_ESCAPED = frozenset("*?[]\\")


class FilterError(ValueError):
    """A filter value cannot be used (it names no part of a key)."""


def _escape(value: str) -> str:
    return "".join(f"\\{c}" if c in _ESCAPED else c for c in value)


def key_part(field: str, value: str, *, substring: bool = False) -> str:
    """The glob for one key part: ``*`` for any, the value as a glob if it has glob characters, else
    the exact value (for ``substring``: anywhere in the part)."""
    if not value:
        return "*"
    if "/" in value or any(c.isspace() for c in value):
        raise FilterError(f"{field}: {value!r} cannot be part of a key (no '/' or spaces)")
    if _GLOB & set(value):
        return value
    return f"*{_escape(value)}*" if substring else _escape(value)


@dataclass(frozen=True)
class Scope:
    """The workspaces (logical clusters, globs allowed) a viewer may see; empty: all of them."""

    workspaces: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> Scope:
        """From ``--workspaces``' comma list."""
        return cls(tuple(w.strip() for w in (text or "").split(",") if w.strip()))

    def allows(self, workspace: str) -> bool:
        """Whether keys of this workspace are visible."""
        return not self.workspaces or any(fnmatchcase(workspace, glob) for glob in self.workspaces)

    def allows_key(self, key: str) -> bool:
        """Whether this key (its cluster part) is visible; a string that is no key is not."""
        parts = key.split("/")
        return len(parts) == 5 and self.allows(parts[2])


@dataclass(frozen=True)
class Filters:
    """A list's filters: exact parts (globs allowed), a substring of the name, one state."""

    rule: str = ""
    workspace: str = ""
    namespace: str = ""
    name: str = ""
    state: State | None = None
    verb: str = ""

    @classmethod
    def of(cls, params: dict[str, str]) -> Filters:
        """From query parameters (unknown ones ignored); raises ``FilterError``."""
        state = params.get("state") or None
        if state is not None and state not in STATES:
            raise FilterError(f"state: {state!r} is not one of {', '.join(STATES)}")
        filters = cls(
            rule=params.get("rule", ""),
            workspace=params.get("workspace", ""),
            namespace=params.get("namespace", ""),
            name=params.get("name", ""),
            state=state,
            verb=params.get("verb", ""),
        )
        filters.match()  # every value checked now
        return filters

    def match(self) -> str:
        """The MATCH glob of a SCAN for these filters."""
        return "/".join(
            (
                key_part("verb", self.verb),
                key_part("rule", self.rule),
                key_part("workspace", self.workspace),
                key_part("namespace", self.namespace),
                key_part("name", self.name, substring=True),
            )
        )

    def fingerprint(self) -> str:
        """Identifies the filters in a continue token, so a token is only used with its own query."""
        return f"{self.match()}|{self.state or ''}"
