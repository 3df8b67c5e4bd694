"""Who may use the console: no credentials on loopback only, else a bearer token or basic auth; a
CSRF token on every POST, and the Origin of a browser's POST must be the console's own."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
REALM = "syncflow console"


class InsecureBindError(ValueError):
    """The console would serve another host than loopback without credentials."""


def loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Auth:
    """The credentials a request must carry: a bearer token, a ``user:password`` pair, both, or none."""

    token: str = ""
    basic: str = ""
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    """Per process: the CSRF tokens of a restarted console are new."""

    def __post_init__(self) -> None:
        if self.basic and ":" not in self.basic:
            raise ValueError("basic auth must be user:password")

    @property
    def required(self) -> bool:
        return bool(self.token or self.basic)

    def check_bind(self, host: str) -> None:
        """Refuse to serve beyond loopback without credentials."""
        if not self.required and not loopback(host):
            raise InsecureBindError(
                f"refusing to serve on {host} without authentication: set --token "
                "(SYNCFLOW_CONSOLE_TOKEN) or SYNCFLOW_CONSOLE_BASIC_AUTH=user:password, or bind 127.0.0.1"
            )

    def identity(self, headers: Mapping[str, str]) -> str | None:
        """Who the request is: "anonymous" when nothing is required, None for missing or wrong
        credentials (``headers``: lower-case names, or Starlette's case-insensitive ones)."""
        if not self.required:
            return "anonymous"
        scheme, _, value = headers.get("authorization", "").partition(" ")
        scheme = scheme.lower()
        if (
            scheme == "bearer"
            and self.token
            and hmac.compare_digest(value.strip().encode(), self.token.encode())
        ):
            return "bearer"
        if scheme == "basic" and self.basic:
            try:
                given = base64.b64decode(value.strip(), validate=True)
            except (binascii.Error, ValueError):
                return None
            if hmac.compare_digest(given, self.basic.encode()):
                return "basic:" + self.basic.partition(":")[0]
        return None

    def challenge(self) -> str:
        """The ``WWW-Authenticate`` header of a 401 (Basic when basic auth is on, so browsers ask)."""
        return f'Basic realm="{REALM}"' if self.basic else f'Bearer realm="{REALM}"'

    def csrf_token(self, identity: str) -> str:
        """The CSRF token of one identity in this process."""
        return hmac.new(self.secret, f"csrf:{identity}".encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, identity: str, given: str | None) -> bool:
        """Whether ``given`` is the identity's CSRF token."""
        return bool(given) and hmac.compare_digest(str(given), self.csrf_token(identity))


def same_origin(headers: Mapping[str, str], scheme: str) -> bool:
    """A browser's POST comes from the console's own pages: its Origin (when sent) is the Host's."""
    origin = headers.get("origin")
    if origin is None:
        return True
    host = headers.get("host", "")
    return origin in (f"{scheme}://{host}", f"http://{host}", f"https://{host}") and origin != "null"
