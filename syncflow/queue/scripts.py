"""Loads the Lua scripts as redis-py ``Script`` objects (EVALSHA, reloaded after NOSCRIPT, so a
``SCRIPT FLUSH`` or a Redis restart is harmless)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from redis import Redis
from redis.commands.core import Script

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


def _source(name: str) -> str:
    return resources.files(__package__).joinpath(f"{name}.lua").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Scripts:
    """The registered scripts of one Redis client."""

    add: Script
    add_each: Script
    claim: Script
    renew: Script
    done: Script
    done_claim: Script
    pump: Script
    touch: Script
    replay: Script
    replay_cause: Script
    held: Script
    budget: Script

    @classmethod
    def register(cls, redis: Redis) -> Scripts:
        prelude = _source("common")
        queue = {name: redis.register_script(prelude + "\n" + _source(name)) for name in _QUEUE_SCRIPTS}
        functions = "\n".join(_source(name) for name in _LEASE_FUNCTIONS)
        lease = {
            name: redis.register_script(f"{prelude}\n{functions}\n{body}")
            for name, body in _LEASE_SCRIPTS.items()
        }
        return cls(budget=redis.register_script(_source("budget")), **queue, **lease)
