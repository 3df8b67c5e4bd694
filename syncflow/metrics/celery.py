"""Task outcomes and prefork children in a worker, through Celery's signals.

Keyed tasks count one outcome per key themselves (``syncflow.tasks.KeyedTask``): ok, after, busy,
stale, invalid-key, or the failure as the queue classifies it (transient, error, permanent). Any
other task is ok or error, counted here.
"""

from __future__ import annotations

from typing import Any

from celery import signals

from syncflow.metrics import multiprocess, record


def outcome_of(retval: Any, state: str | None) -> str:
    """The outcome label of one finished run of a task that is not keyed."""
    from syncflow.queue.errors import classify

    if state == "SUCCESS":
        return "ok"
    if isinstance(retval, BaseException):
        return classify(retval).value
    return "error"


def _task_finished(task: Any = None, retval: Any = None, state: str | None = None, **_: Any) -> None:
    if task is not None and not getattr(task, "keyed", False):  # keyed tasks count per key themselves
        record.task_outcome(task.name, outcome_of(retval, state))


def _child_exited(pid: int | None = None, **_: Any) -> None:
    if pid is not None:
        multiprocess.process_exited(pid)


def connect() -> None:
    """Count every task's outcome and retire the files of prefork children that exit."""
    signals.task_postrun.connect(_task_finished, weak=False)
    signals.worker_process_shutdown.connect(_child_exited, weak=False)
