"""Loads the Lua scripts as redis-py ``Script`` objects (EVALSHA, reloaded after NOSCRIPT, so a
``SCRIPT FLUSH`` or a Redis restart is harmless), called straight on a pooled connection
(``DirectScript``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from redis import Redis
from redis.exceptions import NoScriptError

_QUEUE_SCRIPTS = ("add", "add_each", "renew", "pump", "touch", "replay", "replay_cause", "held")

_LEASE_FUNCTIONS = ("claim", "done")
"""Files that define the functions ``claim`` and ``done``, which the scripts below call."""

_LEASE_SCRIPTS = {
    "claim": "return claim(ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4])",
    "done": "return done(ARGV, 0)",
    # one key's done, then the claim of the next key of its message (ARGV: the claim's four, then done's)
    "done_claim": (
        "local r = done(ARGV, 4)\n"
        "local c = claim(ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4])\n"
        "return {r[1], r[2], r[3], r[4], c[1], c[2], c[3], c[4]}"
    ),
}


class DirectScript:
    """A script called as redis-py's ``Script`` calls it, but with its EVALSHA sent on a connection of
    the client's pool directly: the client's layers around each command (response callbacks, event
    dispatch, metrics recording) cost more client CPU than sending the command and reading its reply,
    and every synced object makes several of these calls. Failures are the client's: a connection
    that fails or times out is dropped and the call retried as the connection's ``retry`` says (then
    the error raised), and a NOSCRIPT loads the script and runs it. A Redis Cluster client, or a call
    on another client (a pipeline), goes the client's way."""

    def __init__(self, redis: Redis, source: str) -> None:
        self.registered = redis.register_script(source)
        self._pool = redis.connection_pool if type(redis) is Redis else None

    @property
    def script(self) -> str:
        """The script's source."""
        return str(self.registered.script)

    def __call__(
        self, keys: Sequence[Any] = (), args: Sequence[Any] = (), client: Redis | None = None
    ) -> Any:
        """Run the script with ``keys`` and ``args`` and return its reply."""
        if self._pool is None or client is not None:
            return self.registered(keys, args, client)
        connection = self._pool.get_connection()
        command = ("EVALSHA", self.registered.sha, len(keys), *keys, *args)

        def send() -> Any:
            connection.send_command(*command)  # type: ignore[no-untyped-call]
            return connection.read_response()

        try:
            return connection.retry.call_with_retry(
                send,
                lambda error: connection.disconnect(),  # type: ignore[no-untyped-call]
            )
        except NoScriptError:
            pass
        finally:
            self._pool.release(connection)
        return self.registered(keys, args)


def _source(name: str) -> str:
    return resources.files(__package__).joinpath(f"{name}.lua").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Scripts:
    """The registered scripts of one Redis client."""

    add: DirectScript
    add_each: DirectScript
    claim: DirectScript
    renew: DirectScript
    done: DirectScript
    done_claim: DirectScript
    pump: DirectScript
    touch: DirectScript
    replay: DirectScript
    replay_cause: DirectScript
    held: DirectScript
    budget: DirectScript

    @classmethod
    def register(cls, redis: Redis) -> Scripts:
        prelude = _source("common")
        queue = {name: DirectScript(redis, prelude + "\n" + _source(name)) for name in _QUEUE_SCRIPTS}
        functions = "\n".join(_source(name) for name in _LEASE_FUNCTIONS)
        lease = {
            name: DirectScript(redis, f"{prelude}\n{functions}\n{body}")
            for name, body in _LEASE_SCRIPTS.items()
        }
        return cls(budget=DirectScript(redis, _source("budget")), **queue, **lease)
