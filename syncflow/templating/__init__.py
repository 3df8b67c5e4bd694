"""Go's ``text/template`` with the sprig functions api-syncagent gives PublishedResource templates.

Syntax: text and ``{{ }}`` actions with the trim markers ``{{- `` and `` -}}``; ``{{/* comments */}}``;
field chains on the dot (``.Object.metadata.name``), on variables (``$``, ``$x.y``) and on parenthesised
pipelines; methods of :class:`Struct` data (``.Value.String``); pipelines, where the piped value is the
last argument of the next command; literals (strings with Go escapes, raw `` `strings` ``,
decimal/hex/octal/binary ints, floats, ``true``, ``false``, ``nil``); ``$x := pipeline`` and
``$x = pipeline``; ``if``/``else if``/``else``/``end``, ``with``/``else with``/``else``/``end`` and
``range`` (lists, maps in key order, ints; ``$e :=`` or ``$i, $e :=``)/``else``/``end``. The
functions are listed in :mod:`syncflow.templating.functions`; unknown functions and variables are
compile errors, as in Go.

Not supported (compile errors): ``define``/``template``/``block``, ``break``/``continue``, character
constants, complex numbers, custom delimiters.

A missing map key is "no value" (printed ``<no value>``, nil when passed to a function) as for Go's
``map[string]any``; an unknown field of a :class:`Struct` is an error, as for a Go struct.

Bounded: the output is capped (``limit``, 64 KiB unless the caller gives less) and rendering stops
with a :class:`TemplateError` as soon as it is exceeded; functions that could build large values
(``printf`` widths, ``repeat``, ``indent``, ``until``) refuse before allocating; a rendering runs at
most :data:`~syncflow.templating.exec.MAX_STEPS` steps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from syncflow.templating import exec as executor
from syncflow.templating.encoding import sha3sum, short_hash
from syncflow.templating.errors import TemplateError
from syncflow.templating.functions import NAMES
from syncflow.templating.lexer import Lexer
from syncflow.templating.nodes import Control, Node, Text
from syncflow.templating.parser import Parser
from syncflow.templating.values import Method, Struct

__all__ = [
    "DEFAULT_LIMIT",
    "Method",
    "Struct",
    "Template",
    "TemplateError",
    "compile_template",
    "sha3sum",
    "short_hash",
]

DEFAULT_LIMIT = 64 * 1024
"""The output cap of a template, in bytes, unless the caller sets a smaller one."""


_MARKUP_RE = re.compile(r"<[A-Za-z/!?]")


class Template:
    """A compiled template."""

    def __init__(self, source: str, nodes: tuple[Node, ...], limit: int, html: bool) -> None:
        self.source = source
        self.nodes = nodes
        self.limit = limit
        self.html = html

    def render(self, data: Mapping[str, Any]) -> str:
        """Execute with ``data`` as the dot; raises :class:`TemplateError` on runtime errors and when the
        output would pass the limit."""
        return executor.render(self.source, self.nodes, data, self.limit, self.html)


def compile_template(text: str, *, limit: int = DEFAULT_LIMIT, html: bool = False) -> Template:
    """Parse ``text``; bad syntax, unknown functions and undefined variables raise :class:`TemplateError`.

    ``html`` escapes each action's output as Go's ``html/template`` does in text context (api-syncagent
    renders template mutations that way); markup in the template's own text is then refused, since its
    contextual escaping is not modelled.
    """
    nodes = Parser(text, Lexer(text).run(), NAMES).parse()
    if html:
        _refuse_markup(text, nodes)
    return Template(text, nodes, limit, html)


def _refuse_markup(text: str, nodes: tuple[Node, ...]) -> None:
    for node in nodes:
        if isinstance(node, Control):
            _refuse_markup(text, node.body + node.orelse)
        elif isinstance(node, Text) and _MARKUP_RE.search(node.text):
            raise TemplateError(
                "HTML markup in the template text is not supported (api-syncagent renders these templates "
                f"with html/template, which escapes values by HTML context): {text!r}"
            )
