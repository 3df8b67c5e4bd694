"""Errors a handler may raise on purpose, and the classification of every other exception."""

from __future__ import annotations

import errno
import http.client
import json
import re
import socket
import ssl
from dataclasses import dataclass

import pydantic
import redis.exceptions
import requests.exceptions
import urllib3.exceptions
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from kubernetes.client.exceptions import ApiException

from syncflow.queue.workqueue import Outcome
from syncflow.util import neterrors

describe = neterrors.describe
"""A one-line description of an error (lives in ``syncflow.util.neterrors``; handlers import it here)."""

TRANSIENT_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
"""HTTP statuses that retrying fixes: request timeouts, conflicts, throttling, server errors."""
PERMANENT_STATUS = frozenset({400, 403, 404, 422})
"""HTTP statuses that retrying cannot fix: bad request, forbidden, a missing dependency, invalid."""

_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,  # includes ConnectionRefusedError/ResetError and http.client.RemoteDisconnected
    TimeoutError,  # includes socket.timeout
    socket.gaierror,
    ssl.SSLError,  # e.g. an EOF in the handshake of a restarting server
    http.client.HTTPException,  # incomplete reads, bad status lines
    # urllib3 (the kubernetes client): timeouts (incl. new connections and name resolution),
    # retries used up, broken responses, TLS, proxies, an exhausted pool
    urllib3.exceptions.MaxRetryError,
    urllib3.exceptions.TimeoutError,
    urllib3.exceptions.ProtocolError,
    urllib3.exceptions.SSLError,
    urllib3.exceptions.ProxyError,
    urllib3.exceptions.PoolError,
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
    # redis: connections (incl. loading, max connections), timeouts, failover and memory pressure
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,
    redis.exceptions.TryAgainError,
    redis.exceptions.ClusterDownError,
    redis.exceptions.OutOfMemoryError,
    # Celery's time limits: the soft one interrupts the handler, the hard one kills its process
    SoftTimeLimitExceeded,
    TimeLimitExceeded,
)
_NETWORK_ERRNOS = frozenset(
    {errno.ENETDOWN, errno.ENETUNREACH, errno.EHOSTDOWN, errno.EHOSTUNREACH, errno.ETIMEDOUT}
)
"""Socket errors that are plain ``OSError``s, not ``ConnectionError``s."""


_CAUSE = re.compile(r"[!-~]{1,200}")


class _CausedError(Exception):
    """An error that may name its cause, e.g. ``forbidden:<cluster>`` or ``unreachable:<endpoint>``:
    when the cause goes, ``QueueService.replay_cause`` retries every key that failed for it."""

    def __init__(self, message: str, *, cause: str | None = None) -> None:
        super().__init__(message)
        if cause is not None and not _CAUSE.fullmatch(cause):
            raise ValueError(f"invalid cause {cause!r}: want 1-200 printable ASCII characters, no spaces")
        self.cause = cause


class PermanentError(_CausedError):
    """Retrying cannot help: park the key until someone fixes the cause and replays it."""


class TransientError(_CausedError):
    """Retrying will help: back off and try again, without ever parking."""


@dataclass
class RequeueAfter(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Not an error: process the key again after ``seconds`` (e.g. waiting for a deletion)."""

    seconds: float

    def __str__(self) -> str:
        return f"requeue after {self.seconds}s"


CLEARING_CAUSES = frozenset({"NamespaceTerminating"})
"""Status causes of a refusal that goes away by itself (a 403 while a namespace is being terminated:
api-syncagent retries it too)."""


def clears_by_itself(exc: ApiException) -> bool:
    """Whether an API error names a cause that clears without anyone acting on it."""
    try:
        body = json.loads(exc.body or "")
    except (TypeError, ValueError):
        return False
    causes = ((body.get("details") or {}).get("causes") or []) if isinstance(body, dict) else []
    return any(isinstance(cause, dict) and cause.get("reason") in CLEARING_CAUSES for cause in causes)


def classify(exc: BaseException) -> Outcome:
    """Map an exception raised by a handler to a queue outcome."""
    if isinstance(exc, RequeueAfter):
        return Outcome.AFTER
    if isinstance(exc, PermanentError | pydantic.ValidationError):
        return Outcome.PERMANENT
    if isinstance(exc, (TransientError, *_CONNECTION_ERRORS)):
        return Outcome.TRANSIENT
    if isinstance(exc, OSError) and exc.errno in _NETWORK_ERRNOS:
        return Outcome.TRANSIENT
    if isinstance(exc, ApiException):
        if exc.status in TRANSIENT_STATUS or clears_by_itself(exc):
            return Outcome.TRANSIENT
        if exc.status in PERMANENT_STATUS:
            return Outcome.PERMANENT
    return Outcome.ERROR
