"""Which work queue each verb belongs to. Filled by ``syncflow.tasks.keyed_task``."""

from __future__ import annotations

import re

from syncflow.queue.layout import KEYED_QUEUES

_VERB = re.compile(r"[a-z][a-z0-9-]*")
_queues: dict[str, str] = {}


def register_verb(verb: str, queue: str) -> None:
    """Declare that keys with this verb are processed on ``queue``."""
    if not _VERB.fullmatch(verb):
        raise ValueError(f"invalid verb {verb!r}: want [a-z][a-z0-9-]*")
    if queue not in KEYED_QUEUES:
        raise ValueError(f"verb {verb!r}: queue must be one of {', '.join(KEYED_QUEUES)}, not {queue!r}")
    if _queues.setdefault(verb, queue) != queue:
        raise ValueError(f"verb {verb!r} is already registered on queue {_queues[verb]!r}")


def queue_of(verb: str) -> str:
    """The work queue of a registered verb."""
    try:
        return _queues[verb]
    except KeyError:
        raise LookupError(f"no keyed task is registered for verb {verb!r}") from None
