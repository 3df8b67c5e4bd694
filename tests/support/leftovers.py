"""Finding processes a test session started and did not stop.

Every process the session starts inherits a marker environment variable (children of children
too, as long as they pass the environment on), so leftovers are found even after their parent died
and they were re-parented. Linux only: it reads ``/proc``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

MARKER_VARIABLE = "SYNCFLOW_TEST_SESSION"


@dataclass(frozen=True)
class Leftover:
    """A live process that carries the session marker."""

    pid: int
    command: str


def _environ_has(pid_dir: Path, marker: bytes) -> bool:
    with contextlib.suppress(OSError):
        return marker in (pid_dir / "environ").read_bytes().split(b"\0")
    return False


def _alive(pid_dir: Path) -> bool:
    with contextlib.suppress(OSError):
        state = (pid_dir / "stat").read_text().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    return False


def marked_processes(marker_value: str, exclude: set[int]) -> list[Leftover]:
    """Live processes (not zombies) whose environment holds ``MARKER_VARIABLE=marker_value``."""
    marker = f"{MARKER_VARIABLE}={marker_value}".encode()
    found = []
    for pid_dir in Path("/proc").iterdir():
        if not pid_dir.name.isdigit() or int(pid_dir.name) in exclude:
            continue
        if _environ_has(pid_dir, marker) and _alive(pid_dir):
            with contextlib.suppress(OSError):
                command = (pid_dir / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(Leftover(int(pid_dir.name), command.strip()[:200]))
    return found


def leftovers(marker_value: str, exclude: set[int], grace: float = 5.0) -> list[Leftover]:
    """Marked processes still alive after ``grace`` seconds (processes being stopped get to finish)."""
    deadline = time.monotonic() + grace
    while True:
        found = marked_processes(marker_value, exclude)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def kill(processes: list[Leftover]) -> None:
    """SIGKILL each leftover."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, signal.SIGKILL)
