"""Task outcomes and prefork children in a worker, through Celery's signals (no hook in task code).

A keyed task returns its outcome (ok, after, busy, stale, invalid-key) or raises the error its key
failed with, classified as the queue classifies it (transient, error, permanent); any other task is
ok or error.
"""

from __future__ import annotations

from typing import Any

from celery import signals

from syncflow.metrics import multiprocess, record

KEYED_OUTCOMES = frozenset({"ok", "after", "busy", "stale", "invalid-key"})
"""What a keyed task returns (``run_keyed``'s report); bounded, so safe as a label."""


def outcome_of(retval: Any, state: str | None) -> str:
    """The outcome label of one finished task run."""
    from syncflow.queue.errors import classify

    if state == "SUCCESS":
        return retval if isinstance(retval, str) and retval in KEYED_OUTCOMES else "ok"
    if isinstance(retval, BaseException):
        return classify(retval).value
    return "error"


def _task_finished(task: Any = None, retval: Any = None, state: str | None = None, **_: Any) -> None:
    if task is not None:
        record.task_outcome(task.name, outcome_of(retval, state))


def _child_exited(pid: int | None = None, **_: Any) -> None:
    if pid is not None:
        multiprocess.process_exited(pid)


def connect() -> None:
    """Count every task's outcome and retire the files of prefork children that exit."""
    signals.task_postrun.connect(_task_finished, weak=False)
    signals.worker_process_shutdown.connect(_child_exited, weak=False)
