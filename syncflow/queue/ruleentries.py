"""A key's rule registry entry as its claim read it, so a task's first rule lookup costs no round trip.

``claim`` reads the registry entry of the key's rule in the script call that takes the lease. The
task's first lookup of that rule takes it (``take``); every later lookup reads Redis again, so a rule
released while the task runs is seen before a finalizer is added (``syncflow.sync.reconciler``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_delivered: ContextVar[tuple[str, str] | None] = ContextVar("syncflow_rule_entry", default=None)


@contextmanager
def delivered(rule: str, entry: str) -> Iterator[None]:
    """Inside the block, the first ``take(rule)`` returns ``entry`` ("" when the registry had none)."""
    token = _delivered.set((rule, entry))
    try:
        yield
    finally:
        _delivered.reset(token)


def take(rule: str) -> tuple[bool, str]:
    """Whether an entry of ``rule`` was delivered and not taken yet, and that entry ("" for none)."""
    held = _delivered.get()
    if held is None or held[0] != rule:
        return False, ""
    _delivered.set(None)
    return True, held[1]
