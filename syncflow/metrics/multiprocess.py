"""prometheus-client's multiprocess mode: each process of a group writes its metrics to files in one
directory, and the process that serves ``/metrics`` adds them up.

A worker is such a group (the Celery master and its prefork children), and so is an all-in-one
agent (its supervisor and every role). The directory must be named before the first metric exists,
so ``prepare`` runs first thing in the process that starts the group.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

ENV = "PROMETHEUS_MULTIPROC_DIR"


class MultiprocessError(RuntimeError):
    """Metrics were created before multiprocess mode was chosen."""


def directory() -> str | None:
    """The group's directory, when this process belongs to one."""
    return os.environ.get(ENV) or None


def prepare(prefix: str) -> str:
    """Give this process group a directory (``$PROMETHEUS_MULTIPROC_DIR`` if set, else a new temporary
    one) and empty it of earlier runs' files; children inherit it through the environment. A
    temporary directory is removed when this process exits."""
    values = sys.modules.get("prometheus_client.values")
    if values is not None and (directory() is None or values.ValueClass is values.MutexValue):
        raise MultiprocessError(
            "prometheus_client was imported before its multiprocess directory was set: "
            "call syncflow.metrics.multiprocess.prepare() first"
        )
    path = directory()
    if path is None:
        path = tempfile.mkdtemp(prefix=f"syncflow-{prefix}-metrics-")
        atexit.register(shutil.rmtree, path, ignore_errors=True)
    Path(path).mkdir(parents=True, exist_ok=True)
    for stale in Path(path).glob("*.db"):
        stale.unlink()
    os.environ[ENV] = path
    return path


def process_exited(pid: int) -> None:
    """Drop the live gauges of a process of the group that ended (its counters stay in the sum)."""
    if directory() is None:
        return
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
