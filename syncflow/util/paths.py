"""Where syncflow keeps files of its own: the XDG state directory, never the current directory."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """``$XDG_STATE_HOME/syncflow``, else ``~/.local/state/syncflow`` (the XDG default)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "syncflow"


def beat_schedule() -> Path:
    """Default path of Celery beat's schedule file."""
    return state_dir() / "beat-schedule"
