"""Requests over kept-alive connections, one per thread and client: urllib3 opens and secures each
connection as its pool would (TLS, CA, client certificate, server name from the kubeconfig), and
http.client carries the requests on it.

urllib3's pool machinery around each request (retry and timeout objects, the pool's queue, its
response object) costs more CPU than the request itself: a GET of a local devcluster takes about
210 µs of client CPU this way and 460 µs through the pool; over TLS, 260 µs and 770 µs. A client
with a proxy keeps going through the pool.

Retries follow the pool's ``Retry`` (``syncflow.kube.clients.RETRIES``) as urllib3 counts them: up to
``total`` more attempts in all, of which at most ``read`` resend a request that failed after it went
out (its answer did not come, or came only in part), and only when its method is idempotent; a
connection that could not be made sent nothing. A kept-alive connection the server has closed is
replaced before a request goes out on it; one whose exchange ended in any exception (a timeout, a
task's time limit) is closed, never reused half-read.
"""

from __future__ import annotations

import http.client
import os
import threading
import types
import weakref
from dataclasses import dataclass
from email.message import Message
from typing import BinaryIO, cast

import urllib3
from kubernetes.client import ApiClient

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})
"""Methods urllib3 resends after a failure once the request went out."""
TRANSPORT_ERRORS = (OSError, http.client.HTTPException, urllib3.exceptions.HTTPError)
"""What a failed exchange raises (connection, TLS, timeouts, broken answers)."""


@dataclass(frozen=True)
class Answer:
    """A whole response: what ``ApiException(http_resp=...)`` reads, and the body."""

    status: int
    reason: str
    headers: Message | urllib3.HTTPHeaderDict
    data: bytes


MAX_HEADER_LINE = 65536
"""Bytes a header line may have (http.client's own limit)."""
MAX_HEADERS = 100
"""Lines an answer's header block may have, its blank end included (http.client's own limit)."""


def parse_headers(fp: BinaryIO, _class: type[http.client.HTTPMessage] = http.client.HTTPMessage) -> Message:
    """An answer's header block read line by line into the message http.client makes of it: fields in
    order, the same limits (line length; the block's lines, its blank end included). Where the email
    package's parser differs on malformed blocks, this reader does what RFC 9112 says: a folded line
    (one starting with a space or a tab) continues the field before it after one space, and a line
    without a colon is skipped (the email parser ends the fields there)."""
    message = _class()
    name, value = "", ""
    for _ in range(MAX_HEADERS):
        line = fp.readline(MAX_HEADER_LINE + 1)
        if len(line) > MAX_HEADER_LINE:
            raise http.client.LineTooLong("header line")
        text = line.decode("iso-8859-1").rstrip("\r\n")
        if not text:
            break
        if text[:1] in (" ", "\t"):
            value = f"{value} {text.strip()}" if name else value
            continue
        if name:
            message[name] = value
        name, colon, value = text.partition(":")
        name, value = (name, value.lstrip(" \t")) if colon else ("", "")
    else:
        raise http.client.HTTPException(f"got more than {MAX_HEADERS} headers")
    if name:
        message[name] = value
    return message


class _Response(http.client.HTTPResponse):
    """http.client's response whose ``begin`` (the standard library's own code) reads the header
    block with :func:`parse_headers`."""

    begin = types.FunctionType(
        http.client.HTTPResponse.begin.__code__,
        {**vars(http.client), "parse_headers": parse_headers},
        "begin",
    )


class KeptConnections:
    """One connection per thread to the server of one urllib3 pool, kept alive between requests."""

    def __init__(self, host: str, pool: urllib3.HTTPConnectionPool) -> None:
        self.host = host
        self._base_path = (urllib3.util.parse_url(host).path or "").rstrip("/")
        self._pool = pool
        policy = urllib3.Retry.from_int(pool.retries)
        self._retries = int(policy.total or 0)
        self._resends = self._retries if policy.read is None else int(policy.read or 0)
        self._local = threading.local()

    def exchange(
        self,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout: tuple[float, float],
    ) -> Answer:
        """Send one request (``target``: path and query under the host's URL) and read its whole
        answer."""
        target = self._base_path + target
        retries_left, resends_left = self._retries, self._resends
        while True:
            conn = self._connection()
            sent = False
            try:
                if conn.sock is None:
                    conn.timeout = timeout[0]
                    conn.connect()
                assert conn.sock is not None
                conn.sock.settimeout(timeout[1])
                sent = True
                http.client.HTTPConnection.request(conn, method, target, body, headers)
                response = http.client.HTTPConnection.getresponse(conn)
                return Answer(response.status, response.reason, response.headers, response.read())
            except TRANSPORT_ERRORS:
                self._drop(conn)
                resend = sent and method in IDEMPOTENT and resends_left > 0
                if retries_left <= 0 or (sent and not resend):
                    raise
                retries_left -= 1
                resends_left -= int(sent)
            except BaseException:
                self._drop(conn)
                raise

    def _connection(self) -> urllib3.connection.HTTPConnection:
        """This thread's connection; a new one if there is none or the server closed it (an
        unconnected one connects on first use)."""
        conn: urllib3.connection.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None:
            if conn.sock is None or conn.is_connected:
                return conn
            conn.close()
        # the pool's own factory, so the connection has the pool's TLS settings
        conn = cast(urllib3.connection.HTTPConnection, self._pool._new_conn())
        conn.response_class = _Response
        self._local.conn = conn
        return conn

    def _drop(self, conn: urllib3.connection.HTTPConnection) -> None:
        conn.close()
        self._local.conn = None


_kept: weakref.WeakKeyDictionary[ApiClient, KeptConnections] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _forget_in_child() -> None:
    """A forked child (a Celery pool process) makes its own connections: the parent's sockets are
    not shared, and a lock another thread held at the fork is not inherited held."""
    global _kept, _lock
    _kept, _lock = weakref.WeakKeyDictionary(), threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def kept_connections(api: ApiClient) -> KeptConnections | None:
    """The kept-alive connections of ``api`` (made once per client and host), or None when its
    requests must go through urllib3's pool (a proxy)."""
    host = api.configuration.host
    kept = _kept.get(api)
    if kept is None or kept.host != host:
        manager = api.rest_client.pool_manager
        if type(manager) is not urllib3.PoolManager:  # an HTTP or SOCKS proxy
            return None
        with _lock:
            kept = _kept.get(api)
            if kept is None or kept.host != host:
                kept = _kept[api] = KeptConnections(host, manager.connection_from_url(host))
    return kept
