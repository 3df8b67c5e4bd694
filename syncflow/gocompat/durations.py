"""Durations as Go writes them (``30s``, ``1m30s``, ``1.5h``, ``250ms``) or as plain seconds (``90``):
what kcp's, api-syncagent's and kube's own flags accept, for every period, delay and timeout setting."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration such as ``30s``, ``1m30s``, ``1.5h`` or ``0``; ValueError otherwise."""
    sign, body = (-1.0, text[1:]) if text.startswith("-") else (1.0, text.removeprefix("+"))
    if body == "0":
        return 0.0
    total, position = 0.0, 0
    for match in _PART.finditer(body):
        if match.start() != position:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not body or position != len(body):
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def duration_seconds(text: str) -> float:
    """Seconds in a plain number (``90``) or a Go duration (``1m30s``); ValueError otherwise."""
    try:
        return float(text)
    except ValueError:
        try:
            return parse_go_duration(text.strip())
        except ValueError:
            want = "want seconds (90) or a Go duration (90s, 1m30s, 250ms)"
            raise ValueError(f"invalid duration {text!r}: {want}") from None


def _seconds(value: Any) -> Any:
    """A setting's value as seconds: strings are parsed, numbers kept (pydantic checks the rest)."""
    return duration_seconds(value) if isinstance(value, str) else value


Seconds = Annotated[float, BeforeValidator(_seconds), Field(ge=0)]
"""A duration setting that may be zero (from seconds or a Go duration)."""
PositiveSeconds = Annotated[float, BeforeValidator(_seconds), Field(gt=0)]
"""A duration setting above zero (from seconds or a Go duration)."""
