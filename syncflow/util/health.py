"""``/healthz`` and ``/readyz`` for a long-running process, on a small background HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Readiness = Callable[[], tuple[bool, dict[str, Any]]]
"""Returns (ready, details) — details are shown in the /readyz body."""


class HealthServer:
    """Serves liveness (always OK while the process runs) and readiness (from ``readiness``)."""

    def __init__(self, address: str, readiness: Readiness) -> None:
        host, _, port = address.rpartition(":")
        check = readiness

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/healthz":
                    self._answer(200, {"status": "ok"})
                elif self.path == "/readyz":
                    ready, details = check()
                    self._answer(200 if ready else 503, {"ready": ready, **details})
                else:
                    self._answer(404, {"error": "not found: try /healthz or /readyz"})

            def _answer(self, code: int, body: dict[str, Any]) -> None:
                payload = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                """Probes are too frequent to log."""

        self.server = ThreadingHTTPServer((host, int(port)), Handler)
        self.server.daemon_threads = True

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        return int(self.server.server_address[1])

    def start(self) -> None:
        """Serve in a daemon thread."""
        threading.Thread(target=self.server.serve_forever, name="health", daemon=True).start()

    def stop(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
