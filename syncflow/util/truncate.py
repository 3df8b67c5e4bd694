"""Caps on text that comes from outside (object fields, API errors, tracebacks) before it is logged
or stored, so one huge value cannot flood logs or Redis."""

from __future__ import annotations

FIELD_LIMIT = 4096
"""Bytes (UTF-8) kept of one log field, error message or traceback."""


def truncate(text: str, limit: int = FIELD_LIMIT) -> str:
    """``text`` if it fits in ``limit`` UTF-8 bytes, else its head ending with ``… (N bytes more)``."""
    if len(text) <= limit // 4:  # fast path: even 4-byte characters fit
        return text
    encoded = text.encode("utf-8", "replace")  # a lone surrogate counts as "?"
    if len(encoded) <= limit:
        return text
    head = encoded[:limit].decode("utf-8", "ignore")  # never ends in half a character
    more = len(encoded) - len(head.encode("utf-8"))
    return f"{head}… ({more} bytes more)"


def truncate_lines(text: str, limit: int = FIELD_LIMIT, line_limit: int = FIELD_LIMIT // 8) -> str:
    """A traceback or stack within ``limit`` bytes: every line capped at ``line_limit`` (a huge error
    message keeps its head), then the last lines kept (the innermost frames and the error), the cut
    said on the first line as ``… (N bytes more)``."""
    if len(text) <= limit // 4 or len(text.encode("utf-8", "replace")) <= limit:
        return text
    lines = [truncate(line, line_limit) for line in text.split("\n")]
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line.encode("utf-8", "replace")) + 1
        if size > limit - 32 and kept:  # room for the marker line
            break
        kept.append(line)
    shown = "\n".join(reversed(kept))
    hidden = len("\n".join(lines[: len(lines) - len(kept)]).encode("utf-8", "replace"))
    return f"… ({hidden} bytes more)\n{shown}" if hidden else shown
