"""A small TCP proxy on loopback that tests can cut or stall, to break connections on purpose."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit


class TcpProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target`` (``http[s]://host:port``), one thread per direction.

    ``cut()`` closes every current connection; ``stall()`` stops forwarding bytes on every
    connection, current and new, without closing any; ``resume()`` forwards again;
    ``hold_replies()`` forwards requests but not what the server answers (``resume()`` ends it),
    so a cut then loses a reply to a request the server has run. At most ``max_connections`` are
    served at once; more are closed on accept.
    """

    def __init__(self, target: str, max_connections: int = 32) -> None:
        parts = urlsplit(target)
        assert parts.hostname in ("127.0.0.1", "localhost", "::1"), "loopback targets only"
        self.scheme = parts.scheme
        self.target = (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
        self.max_connections = max_connections
        self.accepted = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._flowing = threading.Event()
        self._flowing.set()
        self._replying = threading.Event()
        self._replying.set()
        self._closed = threading.Event()
        self._blocked = threading.Event()
        self._lock = threading.Lock()
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()
        self._acceptor = threading.Thread(target=self._accept, name="proxy-accept", daemon=True)
        self._acceptor.start()

    @property
    def url(self) -> str:
        """The URL clients connect to instead of the target."""
        return f"{self.scheme}://127.0.0.1:{self._listener.getsockname()[1]}"

    def cut(self) -> None:
        """Close every current connection (both sides)."""
        with self._lock:
            pairs, self._pairs = self._pairs, set()
        for pair in pairs:
            for sock in pair:
                _close(sock)

    def stall(self) -> None:
        """Stop forwarding bytes, keeping connections open."""
        self._flowing.clear()

    def resume(self) -> None:
        """Forward bytes again, replies included."""
        self._replying.set()
        self._flowing.set()

    def hold_replies(self) -> None:
        """Keep forwarding requests, but hold back every byte the server sends."""
        self._replying.clear()

    def block(self) -> None:
        """Act like an unreachable server: close every connection, and new ones at once."""
        self._blocked.set()
        self.cut()

    def unblock(self) -> None:
        """Accept connections again."""
        self._blocked.clear()

    def close(self) -> None:
        """Stop accepting and close every connection."""
        self._closed.set()
        self._replying.set()
        self._flowing.set()
        _close(self._listener)
        self._acceptor.join(timeout=5)
        self.cut()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                full = len(self._pairs) >= self.max_connections
            if full or self._blocked.is_set():
                _close(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            pair = (client, upstream)
            with self._lock:
                self._pairs.add(pair)
                self.accepted += 1
            for src, dst, gate in ((client, upstream, self._flowing), (upstream, client, self._replying)):
                threading.Thread(target=self._pump, args=(src, dst, pair, gate), daemon=True).start()

    def _pump(
        self,
        src: socket.socket,
        dst: socket.socket,
        pair: tuple[socket.socket, socket.socket],
        gate: threading.Event,
    ) -> None:
        """Copy ``src`` to ``dst`` while the proxy flows and ``gate`` is open."""
        try:
            while not self._closed.is_set():
                if not (self._flowing.wait(0.05) and gate.wait(0.05)):
                    continue
                readable, _, _ = select.select([src], [], [], 0.05)
                if not readable or not (self._flowing.is_set() and gate.is_set()):
                    continue
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except (OSError, ValueError):
            pass
        with self._lock:
            self._pairs.discard(pair)
        for sock in pair:
            _close(sock)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


@contextlib.contextmanager
def tcp_proxy(target: str) -> Iterator[TcpProxy]:
    """A running proxy to ``target``, closed afterwards."""
    proxy = TcpProxy(target)
    try:
        yield proxy
    finally:
        proxy.close()
