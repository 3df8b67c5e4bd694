"""Failures described for people: API errors like kubectl's, the innermost reason of a network error
("Connection refused"), and URLs shown without their password."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from http import HTTPStatus
from urllib.parse import urlsplit, urlunsplit

import urllib3
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


def causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and the errors under it, outermost first: a client library's ``reason`` (urllib3's
    retries, a proxy), else the cause or the context."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None:
        chain.append(current)
        reason = getattr(current, "reason", None)
        current = reason if isinstance(reason, BaseException) else current.__cause__ or current.__context__
    return chain


def network_reason(exc: BaseException) -> str:
    """The innermost cause of a client library's network error, e.g. "Connection refused"."""
    innermost = causes(exc)[-1]
    if isinstance(innermost, OSError) and innermost.strerror:
        return innermost.strerror
    return str(innermost)


_KINDS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    (ConnectionRefusedError, "connection refused"),
    ((ConnectionResetError, ConnectionAbortedError, BrokenPipeError), "connection closed"),
    (ssl.SSLCertVerificationError, "TLS certificate not trusted"),
    ((ssl.SSLError, urllib3.exceptions.SSLError), "TLS handshake failed"),
    ((socket.gaierror, urllib3.exceptions.NameResolutionError), "name not resolved"),
    ((TimeoutError, urllib3.exceptions.TimeoutError), "timeout"),
    (urllib3.exceptions.ProxyError, "proxy failed"),
    ((http.client.HTTPException, urllib3.exceptions.ProtocolError), "not an HTTP answer"),
    (OSError, "network error"),
    (ValueError, "the answer is not JSON"),
)
"""Kinds of failure to answer, by the innermost error that is one (its first match here)."""


def failure_kind(exc: BaseException) -> str:
    """What kind of failure to answer ``exc`` is, in a few fixed words ("connection refused",
    "timeout", "TLS handshake failed" ...), else its type's name: never text that came from the
    server."""
    for error in reversed(causes(exc)):
        for kinds, words in _KINDS:
            if isinstance(error, kinds):
                return words
    return type(exc).__name__


def status_text(status: int) -> str:
    """An HTTP status as its code and standard reason phrase ("403 Forbidden"), not the server's."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def display_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (fit for logs and error messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
