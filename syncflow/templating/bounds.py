"""What can be known about a template's output before rendering it: a lower bound of its length.

Used to reject, when a PublishedResource is validated, naming templates that can never give a valid
name. Counts the non-space text outside ``if``/``with``/``range`` and the actions whose last command
has an output of known size (hashes, ``sha3short``, string constants); everything else counts 0.
"""

from __future__ import annotations

from syncflow.templating.nodes import Action, Command, Const, Ident, Node, Text

_FIXED = {"sha3sum": 64, "sha1sum": 40, "sha256sum": 64, "sha512sum": 128, "shortHash": 20}


def _command_length(cmd: Command, piped: bool) -> int:
    head = cmd.args[0]
    if isinstance(head, Const) and isinstance(head.value, str):
        return len(head.value.strip())
    if not isinstance(head, Ident):
        return 0
    if head.name in _FIXED:
        return _FIXED[head.name]
    if head.name == "sha3short":
        given = cmd.args[1 if piped else 2 :]
        if not given:
            return 20
        length = given[0]
        return min(length.value, 64) if isinstance(length, Const) and type(length.value) is int else 0
    return 0


def min_length(nodes: tuple[Node, ...]) -> int:
    """A lower bound of the length of any successful rendering, after trimming surrounding space."""
    total = 0
    for node in nodes:
        if isinstance(node, Text):
            total += sum(not ch.isspace() for ch in node.text)
        elif isinstance(node, Action) and not node.pipe.decls:
            total += _command_length(node.pipe.cmds[-1], piped=len(node.pipe.cmds) > 1)
    return total
