"""``syncflow console``: the web app on uvicorn, refusing to serve beyond loopback without
credentials."""

from __future__ import annotations

import logging

import uvicorn

from syncflow.console.reader import Reader
from syncflow.console.security import Auth
from syncflow.console.web import create_app
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.console")

KEEP_ALIVE_SECONDS = 5
"""How long an idle HTTP connection stays open."""


def serve(reader: Reader, auth: Auth, host: str, port: int) -> None:
    """Serve the console until interrupted (raises ``InsecureBindError`` before binding if ``host`` is
    not loopback and ``auth`` requires nothing)."""
    auth.check_bind(host)
    log_event(logger, "console.serving", url=f"http://{host}:{port}/", auth="on" if auth.required else "off")
    uvicorn.run(
        create_app(reader, auth),
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        server_header=False,
    )
