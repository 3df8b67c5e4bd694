"""``python -m syncflow.probe [/healthz|/readyz]``: ask this process's health server; exit 0 on a 200.

The container image's HEALTHCHECK. It reads the address from ``SYNCFLOW_HEALTH_ADDRESS`` (the
``health_address`` setting) and imports nothing but the standard library, so it costs a few
milliseconds. A process started without a health address has nothing to ask: that is reported and
counts as healthy (Docker then watches only that the process runs).
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

TIMEOUT = 3.0


def probe_url(address: str, path: str) -> str:
    """The URL of ``path`` on a ``host:port`` health address; wildcard hosts are asked on loopback."""
    host, _, port = address.rpartition(":")
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    return f"http://{host}:{port}{path}"


def check(address: str, path: str = "/healthz") -> tuple[bool, str]:
    """(healthy, one line saying why)."""
    if not address:
        return True, "no health address (SYNCFLOW_HEALTH_ADDRESS is empty): nothing to probe"
    url = probe_url(address, path)
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            return response.status == 200, f"{url}: {response.status}"
    except urllib.error.HTTPError as exc:
        return False, f"{url}: {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return False, f"{url}: {reason}"


def main(argv: list[str] | None = None) -> int:
    """Probe and print one line; the exit code is the verdict."""
    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else "/healthz"
    healthy, line = check(os.environ.get("SYNCFLOW_HEALTH_ADDRESS", ""), path)
    print(line)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
