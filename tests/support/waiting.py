"""Waiting on conditions with a deadline (never sleeping as synchronisation)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest


def wait_for(
    predicate: Callable[[], Any], timeout: float = 10.0, what: str | Callable[[], str] = "condition"
) -> Any:
    """Poll ``predicate`` until it returns a truthy value; fail after ``timeout`` seconds.

    ``what`` describes the condition; a callable is evaluated only on failure (e.g. to attach logs).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what() if callable(what) else what}")
        time.sleep(0.02)
