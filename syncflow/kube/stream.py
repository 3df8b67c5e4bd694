"""One watch connection: opened through the client's REST layer, read as JSON lines under guard."""

from __future__ import annotations

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
"""Most bytes one socket read of a stream takes: the events it completes are handled together."""


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
        """The decoded events, in order, those that one socket read (``READ_BYTES``) completed together;
        closes the response when done."""
        guard = threading.Thread(target=self._guard, name="watch-guard", daemon=True)
        guard.start()
        try:
            buffer = b""
            while data := self.response.read1(READ_BYTES):
                *lines, buffer = (buffer + data).split(b"\n")
                events = [decode(line) for line in lines if line.strip()]
                if events:
                    self._last = time.monotonic()
                    yield events
        finally:
            self._done.set()
            self.response.close()
            guard.join()

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
