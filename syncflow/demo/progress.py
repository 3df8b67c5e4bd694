"""User-facing progress lines: one per step, with the time since the demo started."""

from __future__ import annotations

import time
from collections.abc import Callable


class Progress:
    """Prints ``[ 12.3s] ✓ step`` lines (and failures) to stdout, flushed at once."""

    def __init__(self, echo: Callable[[str], None] | None = None) -> None:
        self.started = time.monotonic()
        self.echo = echo or (lambda line: print(line, flush=True))

    def elapsed(self) -> float:
        """Seconds since the demo started."""
        return time.monotonic() - self.started

    def done(self, text: str) -> None:
        """A step succeeded."""
        self.echo(f"[{self.elapsed():5.1f}s] ✓ {text}")

    def failed(self, text: str) -> None:
        """A step failed."""
        self.echo(f"[{self.elapsed():5.1f}s] ✗ {text}")

    def info(self, text: str = "") -> None:
        """A plain line (hints, paths)."""
        self.echo(text)
