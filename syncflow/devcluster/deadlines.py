"""Request deadlines as kube-apiserver sets them.

Every request that is not long-running (watches are) must finish within the server's
``--request-timeout`` (kube's default: 60 s), or sooner when the client asks with ``?timeout=<Go
duration>`` (what ``kubectl --request-timeout`` sends); a longer ``timeout`` is capped at the server's.
A request past its deadline is answered ``504`` with kube's ``Status`` (reason ``Timeout``).
"""

from __future__ import annotations

from collections.abc import Mapping

from syncflow.devcluster import errors
from syncflow.devcluster.errors import StatusError
from syncflow.gocompat.durations import parse_go_duration

DEFAULT_REQUEST_TIMEOUT = 60.0
_INVALID_TIMEOUT = "invalid timeout specified in the request URL"


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
