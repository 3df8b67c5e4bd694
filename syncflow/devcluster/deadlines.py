"""Request deadlines as kube-apiserver sets them.

Every request that is not long-running (watches are) must finish within the server's
``--request-timeout`` (kube's default: 60 s), or sooner when the client asks with ``?timeout=<Go
duration>`` (what ``kubectl --request-timeout`` sends); a longer ``timeout`` is capped at the server's.
A request past its deadline is answered ``504`` with kube's ``Status`` (reason ``Timeout``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from syncflow.devcluster import errors
from syncflow.devcluster.errors import StatusError

DEFAULT_REQUEST_TIMEOUT = 60.0
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_INVALID_TIMEOUT = "invalid timeout specified in the request URL"


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
        return parse_go_duration(text)


def is_long_running(query: Mapping[str, str]) -> bool:
    """Watches run until their own ``timeoutSeconds``; they have no request deadline."""
    return query.get("watch", "").lower() in ("true", "1")


def request_deadline(query: Mapping[str, str], maximum: float) -> float:
    """Seconds a non-long-running request may take: ``?timeout`` capped at ``maximum``."""
    value = query.get("timeout", "")
    if not value:
        return maximum
    try:
        wanted = parse_go_duration(value)
    except ValueError as exc:
        raise errors.bad_request(f"{_INVALID_TIMEOUT} - {exc}") from None
    return maximum if wanted <= 0 else min(wanted, maximum)


def timed_out() -> StatusError:
    """The 504 kube-apiserver answers when a request outlives its deadline."""
    return StatusError(
        504,
        "Timeout",
        "Timeout: request did not complete within requested timeout - context deadline exceeded",
        {},
    )
