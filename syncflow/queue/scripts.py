"""Loads the Lua scripts as redis-py ``Script`` objects (EVALSHA, reloaded after NOSCRIPT, so a
``SCRIPT FLUSH`` or a Redis restart is harmless)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from redis import Redis
from redis.commands.core import Script

_QUEUE_SCRIPTS = ("add", "claim", "renew", "done", "pump", "touch", "replay", "replay_cause", "held")


def _source(name: str) -> str:
    return resources.files(__package__).joinpath(f"{name}.lua").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Scripts:
    """The registered scripts of one Redis client."""

    add: Script
    claim: Script
    renew: Script
    done: Script
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
        return cls(budget=redis.register_script(_source("budget")), **queue)
