"""Whether a run found its key's object gone: the handler says so (``mark``), and ``done`` then drops
the key from the queue's synced record (K, docs/architecture.md §5.1) instead of recording it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_found: ContextVar[list[bool] | None] = ContextVar("syncflow_key_gone", default=None)


def mark() -> None:
    """The running key's object (or rule) is gone: it names nothing any more. Outside a run: no-op."""
    found = _found.get()
    if found is not None:
        found[:] = [True]


@contextlib.contextmanager
def tracking() -> Iterator[list[bool]]:
    """Collect ``mark`` calls of one run: the yielded list holds True once the run marked its key gone."""
    found: list[bool] = []
    token = _found.set(found)
    try:
        yield found
    finally:
        _found.reset(token)
