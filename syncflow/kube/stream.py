"""One watch connection: opened through the client's REST layer, read as JSON lines under guard."""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections.abc import Generator
from typing import Any

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi, decode

STOPPED = "stopped"
INACTIVE = "inactive"
AGED = "aged"
READ_BYTES = 65536
"""Most bytes one read of a stream takes (the chunk that comes next and those received after it): the
events they complete are handled together."""


def open_stream(
    api: ApiClient, path: str, query: list[tuple[str, str]], timeout: tuple[float, float]
) -> urllib3.BaseHTTPResponse:
    """GET ``path`` and return the unread 2xx response; other statuses raise ``ApiException``."""
    response = JsonApi(api).send("GET", path, query=query, timeout=timeout)
    if not 200 <= response.status <= 299:
        raise ApiException(http_resp=response)  # reads the body
    return response


class GuardedStream:
    """Yields the events of a streaming response until it ends.

    A helper thread shuts the socket down (so a blocked read returns at once) when ``stop`` is set,
    when no line arrived for ``inactivity`` seconds, or when the connection is older than
    ``lifetime``; ``reason`` then says which.
    """

    def __init__(
        self,
        response: urllib3.BaseHTTPResponse,
        stop: threading.Event,
        *,
        inactivity: float,
        lifetime: float,
        poll: float = 0.1,
    ) -> None:
        self.response = response
        self.reason: str | None = None
        self._stop = stop
        self._inactivity = inactivity
        self._deadline = time.monotonic() + lifetime
        self._last = time.monotonic()
        self._poll = poll
        self._done = threading.Event()

    def reads(self) -> Generator[list[dict[str, Any]]]:
        """The decoded events, in order, those that one read (``_read``) completed together; closes the
        response when done."""
        guard = threading.Thread(target=self._guard, name="watch-guard", daemon=True)
        guard.start()
        try:
            buffer = b""
            while data := self._read():
                *lines, buffer = (buffer + data).split(b"\n")
                events = [decode(line) for line in lines if line.strip()]
                if events:
                    self._last = time.monotonic()
                    yield events
        finally:
            self._done.set()
            self.response.close()
            guard.join()

    def _read(self) -> bytes:
        """The next chunk of the response, then the chunks after it that have arrived already, up to
        ``READ_BYTES``, without waiting: an API server sends its stream as chunks (kube-apiserver one
        per 2 KiB of events that wait together), and a busy one sends several at once."""
        data = self.response.read1(READ_BYTES)
        while data and len(data) < READ_BYTES and self._arrived():
            more = self.response.read1(READ_BYTES - len(data))
            if not more:
                break
            data += more
        return data

    def _arrived(self) -> bool:
        """Whether the next chunk of the response can be read without waiting: it has been received, in
        the client's buffer or the socket's. False when the response does not say (no gathering)."""
        reader = getattr(self.response, "_fp", None)  # http.client's response
        buffered = getattr(reader, "fp", None)
        sock = getattr(self.response.connection, "sock", None)
        if sock is None or not isinstance(buffered, io.BufferedReader):
            return False
        timeout = sock.gettimeout()
        try:
            sock.settimeout(0.0)  # a peek at an empty buffer reads the socket: now without waiting
            received = buffered.peek(1)
        except (OSError, ValueError):
            return False
        finally:
            with contextlib.suppress(OSError):
                sock.settimeout(timeout)
        if not getattr(reader, "chunked", False):
            return bool(received)
        # A chunk starts with its size line, after the line break that ends the chunk before it (if
        # read): reading it waits until that whole line is here.
        left = getattr(reader, "chunk_left", -1)
        line_breaks = 1 if left is None else 2 if left == 0 else 0
        return received.count(b"\r\n") >= line_breaks if line_breaks else bool(received)

    def _guard(self) -> None:
        while not self._done.wait(self._poll):
            now = time.monotonic()
            if self._stop.is_set():
                reason = STOPPED
            elif now - self._last > self._inactivity:
                reason = INACTIVE
            elif now > self._deadline:
                reason = AGED
            else:
                continue
            self.reason = reason
            self._shutdown()
            return

    def _shutdown(self) -> None:
        try:
            self.response.shutdown()
        except (OSError, RuntimeError, ValueError):
            self.response.close()
