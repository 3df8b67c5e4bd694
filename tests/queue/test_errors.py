"""Classification of handler exceptions into queue outcomes."""

from __future__ import annotations

import errno
import http.client
import json
import socket
import ssl
from typing import Any

import pydantic
import pytest
import redis.exceptions
import requests.exceptions
import urllib3.exceptions
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from kubernetes.client.exceptions import ApiException

from syncflow.queue.errors import PermanentError, RequeueAfter, TransientError, classify
from syncflow.queue.workqueue import Outcome
from syncflow.util.neterrors import describe

_NO_POOL: Any = None


def _validation_error() -> pydantic.ValidationError:
    class Model(pydantic.BaseModel):
        n: int

    try:
        Model.model_validate({"n": "x"})
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("no validation error")


@pytest.mark.parametrize(
    ("exc", "outcome"),
    [
        (ApiException(status=409), Outcome.TRANSIENT),
        (ApiException(status=429), Outcome.TRANSIENT),
        (ApiException(status=500), Outcome.TRANSIENT),
        (ApiException(status=503), Outcome.TRANSIENT),
        (ApiException(status=504), Outcome.TRANSIENT),
        (ApiException(status=408), Outcome.TRANSIENT),
        (ApiException(status=400), Outcome.PERMANENT),
        (ApiException(status=403), Outcome.PERMANENT),
        (ApiException(status=404), Outcome.PERMANENT),
        (ApiException(status=422), Outcome.PERMANENT),
        (ApiException(status=401), Outcome.ERROR),
        (ApiException(status=410), Outcome.ERROR),
        (urllib3.exceptions.MaxRetryError(_NO_POOL, "/", None), Outcome.TRANSIENT),
        (urllib3.exceptions.ProtocolError("reset"), Outcome.TRANSIENT),
        (urllib3.exceptions.ReadTimeoutError(_NO_POOL, "/", "slow"), Outcome.TRANSIENT),
        (urllib3.exceptions.ConnectTimeoutError(), Outcome.TRANSIENT),
        (urllib3.exceptions.NewConnectionError(_NO_POOL, "refused"), Outcome.TRANSIENT),
        (urllib3.exceptions.NameResolutionError("kcp", _NO_POOL, socket.gaierror()), Outcome.TRANSIENT),
        (urllib3.exceptions.SSLError("EOF in violation of protocol"), Outcome.TRANSIENT),
        (urllib3.exceptions.ProxyError("proxy down", OSError()), Outcome.TRANSIENT),
        (urllib3.exceptions.IncompleteRead(10, 20), Outcome.TRANSIENT),
        (urllib3.exceptions.EmptyPoolError(_NO_POOL, "full"), Outcome.TRANSIENT),
        (http.client.RemoteDisconnected("closed"), Outcome.TRANSIENT),
        (http.client.IncompleteRead(b""), Outcome.TRANSIENT),
        (ssl.SSLEOFError(), Outcome.TRANSIENT),
        (OSError(errno.EHOSTUNREACH, "No route to host"), Outcome.TRANSIENT),
        (OSError(errno.ENETUNREACH, "Network is unreachable"), Outcome.TRANSIENT),
        (redis.exceptions.TimeoutError(), Outcome.TRANSIENT),
        (redis.exceptions.BusyLoadingError(), Outcome.TRANSIENT),
        (redis.exceptions.ReadOnlyError(), Outcome.TRANSIENT),
        (redis.exceptions.TryAgainError(), Outcome.TRANSIENT),
        (redis.exceptions.MasterDownError("MASTERDOWN"), Outcome.TRANSIENT),
        (redis.exceptions.OutOfMemoryError(), Outcome.TRANSIENT),
        (SoftTimeLimitExceeded(), Outcome.TRANSIENT),
        (TimeLimitExceeded(60), Outcome.TRANSIENT),
        (OSError(errno.ENOENT, "No such file"), Outcome.ERROR),
        (redis.exceptions.ResponseError("WRONGTYPE"), Outcome.ERROR),
        (requests.exceptions.ConnectionError(), Outcome.TRANSIENT),
        (redis.exceptions.ConnectionError(), Outcome.TRANSIENT),
        (ConnectionRefusedError(), Outcome.TRANSIENT),
        (TimeoutError(), Outcome.TRANSIENT),
        (socket.gaierror(), Outcome.TRANSIENT),
        (TransientError("later"), Outcome.TRANSIENT),
        (PermanentError("never"), Outcome.PERMANENT),
        (_validation_error(), Outcome.PERMANENT),
        (RequeueAfter(5), Outcome.AFTER),
        (RuntimeError("bug"), Outcome.ERROR),
        (KeyError("x"), Outcome.ERROR),
    ],
    ids=lambda v: type(v).__name__ + (f"-{v.status}" if isinstance(v, ApiException) else ""),
)
def test_classify(exc: Exception, outcome: Outcome) -> None:
    assert classify(exc) is outcome


def test_describe_api_errors_like_kubectl() -> None:
    error = ApiException(status=403, reason="Forbidden")
    error.body = '{"kind":"Status","message":"namespaces \\"x\\" is being terminated","code":403}'
    assert describe(error) == '403 Forbidden: namespaces "x" is being terminated'
    assert describe(ApiException(status=500, reason="Internal Server Error")) == "500 Internal Server Error"
    assert describe(ValueError("plain")) == "plain"


def _api_error(status: int, body: object) -> ApiException:
    error = ApiException(status=status, reason="Forbidden")
    error.body = body if isinstance(body, str) else json.dumps(body)
    return error


def test_a_403_that_clears_by_itself_is_transient_and_any_other_403_permanent() -> None:
    """kube's NamespaceLifecycle admission names the NamespaceTerminating cause: api-syncagent retries it."""
    terminating = {
        "kind": "Status",
        "reason": "Forbidden",
        "code": 403,
        "message": 'configmaps "c" is forbidden: unable to create new content in namespace ns because it '
        "is being terminated",
        "details": {
            "name": "c",
            "kind": "configmaps",
            "causes": [{"reason": "NamespaceTerminating", "message": "namespace ns is being terminated"}],
        },
    }
    rbac = {
        "kind": "Status",
        "reason": "Forbidden",
        "code": 403,
        "details": {"name": "c", "kind": "configmaps"},
    }
    assert classify(_api_error(403, terminating)) is Outcome.TRANSIENT
    assert classify(_api_error(403, rbac)) is Outcome.PERMANENT
    assert classify(_api_error(403, "<html>forbidden</html>")) is Outcome.PERMANENT
    assert classify(_api_error(403, {"details": {"causes": "not a list"}})) is Outcome.PERMANENT
