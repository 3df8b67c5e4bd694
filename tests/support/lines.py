"""Reading a subprocess's output line by line on a thread, so tests wait on it with a deadline."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterable

import pytest


class LineReader:
    """Collects the lines of ``stream`` as they arrive."""

    def __init__(self, stream: Iterable[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: Iterable[str]) -> None:
        for line in stream:
            self.lines.put(line)

    def until(self, wanted: str, timeout: float) -> list[str]:
        """The lines read so far, once one contains ``wanted``; fails after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if wanted in line:
                return self.seen
        pytest.fail(f"no line with {wanted!r} within {timeout}s:\n{''.join(self.seen)}")
