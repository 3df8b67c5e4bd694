"""Which work queue each verb belongs to. Filled by ``syncflow.tasks.keyed_task``."""

from __future__ import annotations

import re

from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import KEYED_QUEUES

_VERB = re.compile(r"[a-z][a-z0-9-]*")
_queues: dict[str, tuple[str, bool]] = {}


def register_verb(verb: str, queue: str, *, names_rule: bool = False) -> None:
    """Declare that keys with this verb are processed on ``queue``; ``names_rule``: the key's rule part
    names a sync rule of the registry (the engine's keys), so its claim ends the key once that rule is
    gone. A control key's rule part is only a name (e.g. the PublishedResource a projection key
    projects): it runs whatever the registry says, so the release a deletion needs is never skipped."""
    if not _VERB.fullmatch(verb):
        raise ValueError(f"invalid verb {verb!r}: want [a-z][a-z0-9-]*")
    if queue not in KEYED_QUEUES:
        raise ValueError(f"verb {verb!r}: queue must be one of {', '.join(KEYED_QUEUES)}, not {queue!r}")
    registered = _queues.setdefault(verb, (queue, names_rule))
    if registered != (queue, names_rule):
        queue, names_rule = registered
        raise ValueError(f"verb {verb!r} is already registered (queue {queue!r}, names_rule={names_rule})")


def queue_of(verb: str) -> str:
    """The work queue of a registered verb."""
    return _registered(verb)[0]


def rule_of(key: ObjectKey) -> str:
    """The registry rule ``key`` belongs to ("" for a key of a verb that names none)."""
    return key.rule if _registered(key.verb)[1] else ""


def _registered(verb: str) -> tuple[str, bool]:
    try:
        return _queues[verb]
    except KeyError:
        raise LookupError(f"no keyed task is registered for verb {verb!r}") from None
