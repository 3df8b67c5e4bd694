"""Failures described for people: API errors like kubectl's, the innermost reason of a network error
("Connection refused"), and URLs shown without their password."""

from __future__ import annotations

import json
from urllib.parse import urlsplit, urlunsplit

from kubernetes.client.exceptions import ApiException


def describe(exc: BaseException) -> str:
    """A one-line description of an error, like kubectl's for API errors (``403 Forbidden: ...``)."""
    if isinstance(exc, ApiException):
        try:
            body = json.loads(exc.body) if exc.body else {}
        except (TypeError, ValueError):
            body = {}
        message = body.get("message") if isinstance(body, dict) else None
        return f"{exc.status} {exc.reason}: {message or exc.body or ''}".rstrip(": ")
    return str(exc)


def server_error(exc: ApiException, action: str, name: str) -> str:
    """kubectl's ``Error from server (<reason>): error when <action> <name>: <message>``."""
    reason, message = _reason_and_message(exc)
    return f"Error from server ({reason}): error when {action} {name}: {message}"


def status_message(exc: ApiException) -> str:
    """kubectl's ``Error from server (<reason>): <message>`` for a refused request."""
    reason, message = _reason_and_message(exc)
    return f"Error from server ({reason}): {message}"


def _reason_and_message(exc: ApiException) -> tuple[str, str]:
    try:
        status = json.loads(exc.body or "")
        return str(status.get("reason") or exc.reason), str(status.get("message") or exc.body)
    except (TypeError, ValueError, AttributeError):
        return str(exc.reason), str(exc.body)


def network_reason(exc: BaseException) -> str:
    """The innermost cause of a client library's network error, e.g. "Connection refused"."""
    current: BaseException | None = exc
    innermost = exc
    while current is not None:
        innermost = current
        reason = getattr(current, "reason", None)
        current = reason if isinstance(reason, BaseException) else current.__cause__ or current.__context__
    if isinstance(innermost, OSError) and innermost.strerror:
        return innermost.strerror
    return str(innermost)


def display_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (fit for logs and error messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
