"""Paginated lists of keys, like the Kubernetes API's: at most ``limit`` items and an opaque
``continue`` token. A page walks the structures of the asked state in every queue with SCAN-family
calls, at most ``MAX_SCANS`` of them, so its work is bounded whatever the number of keys; a page may
therefore come back short (even empty) with a token. A key is reported where its state lives
(``syncflow.console.keystate``), so walking every page lists each key once, unless it changes state
meanwhile (the guarantee SCAN gives)."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from redis import Redis

from syncflow.console.filters import Filters, Scope
from syncflow.console.keystate import SCANNED, read_states
from syncflow.console.models import ObjectPage, ObjectRow
from syncflow.console.scanning import scan_step
from syncflow.queue.layout import KEYED_QUEUES, QueueLayout

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
SCAN_COUNT = 500
"""COUNT of each SCAN call: about half a millisecond of Redis time."""
MAX_SCANS = 32
"""SCAN calls per page at most (above the 18 structures of an empty agent: its first page is its last)."""


class TokenError(ValueError):
    """A continue token that is not one of ours, or belongs to other filters."""


@dataclass(frozen=True)
class Position:
    """Where a walk stands: the step (queue and structure), its cursor, and how many names of the batch
    at that cursor the previous pages already went through (SCAN returns the same batch for the same
    cursor while the structure does not grow past a rehash; if it does, SCAN's own guarantee holds)."""

    step: int = 0
    cursor: int = 0
    offset: int = 0

    def encode(self, filters: Filters) -> str:
        raw = json.dumps([self.step, self.cursor, self.offset, filters.fingerprint()]).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str | None, filters: Filters) -> Position:
        if not token:
            return cls()
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            step, cursor, offset, fingerprint = json.loads(raw)
            position = cls(int(step), int(cursor), int(offset))
        except (binascii.Error, ValueError, TypeError) as exc:
            raise TokenError("continue: not a token of this list") from exc
        if fingerprint != filters.fingerprint() or min(position.step, position.cursor, position.offset) < 0:
            raise TokenError("continue: the token belongs to other filters")
        return position


def clamp_limit(limit: int | None) -> int:
    """The page size asked for, within 1..``MAX_LIMIT``."""
    return DEFAULT_LIMIT if limit is None else max(1, min(MAX_LIMIT, limit))


STATE_CHUNK = 128
"""Keys whose state one script call reads: a page reads only as many as it returns, plus one chunk."""


def list_page(
    redis: Redis,
    agent: str,
    scope: Scope,
    filters: Filters,
    limit: int | None = None,
    token: str | None = None,
) -> ObjectPage:
    """One page of the keys matching ``filters`` that ``scope`` allows."""
    limit = clamp_limit(limit)
    plan = [(QueueLayout(agent, q), s) for q in KEYED_QUEUES for s in SCANNED[filters.state]]
    position = Position.decode(token, filters)
    match = filters.match()
    items: list[ObjectRow] = []
    scans = scanned = 0
    step, cursor, offset = position.step, position.cursor, position.offset
    while step < len(plan) and scans < MAX_SCANS and len(items) < limit:
        layout, structure = plan[step]
        following, names = scan_step(redis, layout.key(structure), structure, cursor, match, SCAN_COUNT)
        scans += 1
        scanned += len(names) - offset
        while offset < len(names) and len(items) < limit:
            chunk = names[offset : offset + max(STATE_CHUNK, limit - len(items))]
            states = read_states(redis, layout, [name for name in chunk if scope.allows_key(name)])
            rows = {s.key: s.row(layout.queue) for s in states if s is not None and s.home == structure}
            for name in chunk:
                offset += 1
                if name in rows:
                    items.append(rows[name])
                    if len(items) == limit:
                        break
        if offset < len(names):
            break  # the page is full inside this batch: the token resumes at the next name of it
        offset = 0
        if following == 0:
            step, cursor = step + 1, 0
        else:
            cursor = following
    done = step >= len(plan)
    next_token = None if done else Position(step, cursor, offset).encode(filters)
    return ObjectPage(items=items, continue_=next_token, scanned=scanned)
