"""The system's chromium for Playwright: never a browser Playwright downloads."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

VARIABLE = "SYNCFLOW_TEST_CHROMIUM"
"""A chromium (or Chrome) binary to use instead of the one found on ``PATH``."""
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_binary() -> str | None:
    """The chromium to drive: ``$SYNCFLOW_TEST_CHROMIUM``, else the first of ``NAMES`` on ``PATH``
    (Debian's package installs ``/usr/bin/chromium``); None when there is none."""
    configured = os.environ.get(VARIABLE)
    if configured:
        return configured if Path(configured).is_file() else None
    return next((found for name in NAMES if (found := shutil.which(name))), None)


def missing_reason() -> str:
    """Why the browser tests skip."""
    return (
        f"no chromium binary: install Debian's chromium (apt-get install chromium), put one of "
        f"{', '.join(NAMES)} on PATH or set {VARIABLE}"
    )
