"""The Celery app, the keyed task base and syncflow's own tasks.

Every keyed task is named ``syncflow.<verb>`` and takes one argument, the object key. Handlers are
registered per verb with ``@keyed_task(verb, queue=...)``; modules that define handlers are imported
by workers through ``--include`` or the ``task_modules`` setting.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any, ParamSpec, TypeVar, cast

from celery import Celery, Task, current_task
from celery.exceptions import TimeLimitExceeded
from celery.signals import setup_logging
from celery.worker.request import Request
from kubernetes.client.exceptions import ApiException

from syncflow.app import modes
from syncflow.app.schedule import beat_schedule, housekeeping_tasks
from syncflow.config import Settings
from syncflow.metrics import record as metrics
from syncflow.queue.celeryconf import celery_config
from syncflow.queue.execute import (
    KEYS_PER_MESSAGE,
    Handler,
    RunReport,
    help_run,
    out_of_time,
    run_message,
    run_token,
)
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import CONTROL_QUEUE, PERIODIC_QUEUE
from syncflow.queue.pump import PumpTotals
from syncflow.queue.registry import register_verb
from syncflow.queue.runtime import Runtime
from syncflow.sync.worker import RuleWorker
from syncflow.util.logs import configure_logging, log_event
from syncflow.util.neterrors import describe
from syncflow.util.truncate import truncate

logger = logging.getLogger("syncflow.tasks")

P = ParamSpec("P")
R = TypeVar("R")


MESSAGES_PER_SEND = 16
"""A large send (a poll's, relist's or resync's many keys) goes out in this many messages, enough
for as many worker processes to share it; their keys wait for a backlog anyway, so fewer messages
only save Celery's cost per message (about 1 ms to publish and as much to deliver)."""
MAX_KEYS_PER_MESSAGE = 64
"""Most keys any message carries."""
ARGS_SHOWN = 16_384
"""Characters of a message's keys its task shows as arguments (Flower, task events): 64 keys of 250
characters. Celery's default, 1,024, would hide most keys of a large message."""


def keys_per_message(keys: int) -> int:
    """How many keys each message of a send of ``keys`` keys (of one task and Celery queue) carries."""
    return min(MAX_KEYS_PER_MESSAGE, max(KEYS_PER_MESSAGE, -(-keys // MESSAGES_PER_SEND)))


class CeleryPublisher:
    """Publishes keyed-task messages through a Celery app (one pooled producer per batch): keys of
    the same task and Celery queue go together, ``keys_per_message`` per message (``together``: up to
    ``MAX_KEYS_PER_MESSAGE``, the rest of one message put back). A task shows up to
    ``ARGS_SHOWN`` characters of its keys as its arguments, so Flower finds it by any of its keys."""

    def __init__(self, app: Celery) -> None:
        self.app = app

    def __call__(self, messages: Sequence[tuple[ObjectKey, str]], /, *, together: bool = False) -> None:
        grouped: dict[tuple[str, str], list[str]] = {}
        for key, queue in messages:
            grouped.setdefault((key.task_name, queue), []).append(str(key))
        self.app.amqp.argsrepr_maxsize = ARGS_SHOWN
        with self.app.producer_or_acquire() as producer:
            for (task_name, queue), keys in grouped.items():
                size = MAX_KEYS_PER_MESSAGE if together else keys_per_message(len(keys))
                for i in range(0, len(keys), size):
                    chunk = keys[i : i + size]
                    self.app.send_task(task_name, args=chunk, queue=queue, producer=producer)


def app_config(settings: Settings) -> dict[str, Any]:
    """Everything syncflow's Celery app needs from the settings, schedule included."""
    schedule = beat_schedule(settings)
    return {
        **celery_config(settings),
        "beat_schedule": schedule,
        "task_annotations": {name: {"send_events": False} for name in housekeeping_tasks(schedule)},
        "imports": settings.all_task_modules,
    }


def create_app(settings: Settings) -> Celery:
    """A separate, configured app for producers that talk to another agent or Redis (tests, tools)."""
    other = Celery("syncflow", set_as_current=False)
    other.conf.update(app_config(settings))
    return other


app = Celery("syncflow", set_as_current=False)
"""The app of worker and beat processes, configured from ``runtime.settings`` on first use."""
runtime = Runtime(CeleryPublisher(app))
app.add_defaults(lambda: app_config(runtime.settings))


def bind(settings: Settings) -> None:
    """Use ``settings`` in this process; call once at start, before the app or queue is used."""
    runtime.bind(settings)
    app.conf.update(app_config(settings))


@setup_logging.connect  # type: ignore[untyped-decorator]
def _setup_logging(loglevel: int | str | None = None, **_: Any) -> None:
    settings = runtime.settings
    configure_logging(
        settings.log_format, loglevel or logging.INFO, agent=f"{settings.agent_name}.syncagent.kcp.io"
    )


def _running(pid: int | None) -> bool:
    """Whether process ``pid`` is alive (not a zombie); False when it cannot be told (no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


class KeyedRequest(Request):  # type: ignore[misc]
    """A keyed task's request in the worker's main process."""

    def on_timeout(self, soft: bool, timeout: float) -> None:
        """At the hard time limit the pool process is still running the handler (it is killed just
        after): a timeout, so release the key's lease now as a transient failure. A process that
        already died on its own (e.g. OOM, and billiard has not noticed yet) is no timeout: its
        lease expires and counts as a strike, so a key that kills its worker still parks."""
        killed_by_limit = not soft and _running(self.worker_pid)
        super().on_timeout(soft, timeout)
        if killed_by_limit and self.args:
            keys = [str(key) for key in self.args]
            try:
                out_of_time(runtime.service, keys, self.id, TimeLimitExceeded(timeout), _queue_of(self))
            except Exception as error:  # Redis down: the lease then expires and the pump requeues
                log_event(logger, "task.time_limit_unrecorded", level=logging.WARNING, error=repr(error))


def _queue_of(request: Any) -> str:
    """The Celery queue a task's message came from."""
    return str((request.delivery_info or {}).get("routing_key") or "sync")


SHOWN_LIMIT = 512
"""Bytes of an API error's description that a failed task carries."""


def shown(error: BaseException) -> BaseException:
    """``error``, fit to end a failed task: the task event (Flower) and Celery's log show an error's
    repr, which is a bare ``ApiException()`` for the kubernetes client's errors; an ApiException gets
    its status, reason and message as its argument (``ApiException('404 Not Found: …')``, bounded).
    The key's outcome was decided before, from the error itself."""
    if isinstance(error, ApiException):
        error.args = (truncate(describe(error), SHOWN_LIMIT),)
    return error


class KeysFailedError(Exception):
    """Several keys of one message, or keys its task helped run, failed (each has its own
    ``task.done`` line and failure record)."""


FAILURES_NAMED = 100
"""Most failed keys a task keeps, of those it helped run, to name in its failure."""


@dataclass
class HelpedRuns:
    """The keys a task helped run (``help_here``), and the first ``FAILURES_NAMED`` that failed."""

    count: int = 0
    failures: int = 0
    failed: list[tuple[str, Exception]] = field(default_factory=list)

    def add(self, report: RunReport) -> None:
        self.count += 1
        if report.error is not None:
            self.failures += 1
            if len(self.failed) < FAILURES_NAMED:
                self.failed.append((report.key, report.error))


_helped: ContextVar[HelpedRuns | None] = ContextVar("syncflow_helped", default=None)
"""The keys the keyed task running in this context helped run."""


def help_here(handler: Handler, task_name: str, keys: Sequence[ObjectKey]) -> None:
    """Run keys the running keyed task has just queued, of the verb of ``handler`` (task
    ``task_name``), in this process too (``help_run``). Those that fail fail the task at its end, by
    their keys: their own messages find them run and succeed, so Flower shows the failure here."""
    token = run_token(current_task.request.id)
    helped = _helped.get()
    for report in help_run(runtime.service, runtime.renewer, handler, keys, token):
        metrics.task_outcome(task_name, report.outcome)
        if helped is not None:
            helped.add(report)


class KeyedTask(Task):  # type: ignore[misc]
    """Base of every keyed task: for each key of the message, claim → handler → done. A message
    whose keys all went well returns their outcome (one key) or outcomes (several, by key); one
    whose key failed ends as a task failure with that key's error (for Flower). Each failed key is
    then backing off or parked, never retried by Celery itself. Each key counts as one task run in
    the ``syncflow_queue_tasks_total`` metric."""

    handler: Handler
    keyed = True  # syncflow.metrics.celery counts keyed tasks per key, here
    throws = (Exception,)  # expected: run_keyed already logged the outcome line
    Request = KeyedRequest

    def run_keys(self, keys: tuple[str, ...]) -> str | dict[str, str]:
        request = self.request
        service = runtime.service
        token = run_token(request.id)
        helped = HelpedRuns()
        reset = _helped.set(helped)
        try:
            reports = run_message(service, runtime.renewer, self.handler, keys, token, _queue_of(request))
        finally:
            _helped.reset(reset)
        for report in reports:
            metrics.task_outcome(self.name, report.outcome)
        # a report per key started: the keys past the time share were resent
        failed = [(report.key, error) for report in reports if (error := report.error) is not None]
        if len(failed) == 1 and not helped.failures:
            raise shown(failed[0][1])
        if failed or helped.failures:
            summary = "; ".join(
                f"{key}: {type(error).__name__}: {describe(error)}" for key, error in failed + helped.failed
            )
            failures, total = len(failed) + helped.failures, len(keys) + helped.count
            raise KeysFailedError(truncate(f"{failures} of {total} keys failed: {summary}"))
        if len(keys) == 1 and reports:
            return reports[0].outcome
        return {report.key: report.outcome for report in reports}


def _run(self: KeyedTask, *keys: str) -> str | dict[str, str]:
    return self.run_keys(keys)


def keyed_task(verb: str, queue: str = "sync", *, names_rule: bool = False) -> Callable[[Handler], Handler]:
    """Register ``handler`` as the task ``syncflow.<verb>`` processing keys of that verb on ``queue``
    (its messages carry one or more keys); ``names_rule``: see ``register_verb``."""

    def register(handler: Handler) -> Handler:
        register_verb(verb, queue, names_rule=names_rule)
        app.task(
            name=f"syncflow.{verb}",
            base=KeyedTask,
            bind=True,
            handler=staticmethod(handler),
            syncflow_queue=queue,
        )(_run)
        return handler

    return register


def periodic_task(name: str) -> Callable[[Callable[P, R]], Callable[P, R | None]]:
    """Register a beat task ``name`` on the periodic queue that never fails: any exception is logged
    as one ``periodic.failed`` line and the run ends normally (returning None); the next tick retries."""

    def register(func: Callable[P, R]) -> Callable[P, R | None]:
        @functools.wraps(func)
        def run(*args: P.args, **kwargs: P.kwargs) -> R | None:
            try:
                return func(*args, **kwargs)
            except Exception as exc:
                error = f"{type(exc).__name__}: {describe(exc)}"
                log_event(logger, "periodic.failed", level=logging.WARNING, task=name, error=error)
                return None

        return cast(Callable[P, R | None], app.task(name=name, syncflow_queue=PERIODIC_QUEUE)(run))

    return register


# --- the engine's tasks, for every mode ---


def rule_worker() -> RuleWorker:
    """The engine's task bodies for this process's settings and mode (built once by the mode)."""
    service = runtime.service
    return modes.rule_worker(runtime.settings, service.redis, service.budget)


@keyed_task("sync", queue="sync", names_rule=True)
def sync(key: ObjectKey) -> None:
    """Sync one source object to its copy (spec down, status up, deletion)."""
    rule_worker().sync(key)


@keyed_task("status", queue="status", names_rule=True)
def status(key: ObjectKey) -> None:
    """Return a copy's status to its source object."""
    rule_worker().status(key)


@keyed_task("related", queue="sync", names_rule=True)
def related(key: ObjectKey) -> None:
    """Sync the related objects of one source object (rules with related resources)."""
    rule_worker().related(key)


@keyed_task("release", queue=CONTROL_QUEUE)
def release(key: ObjectKey) -> None:
    """Release what a rule that went away made (runs whatever the registry says: it is for gone rules)."""
    rule_worker().release_gone(key)


@keyed_task("sweep", queue=CONTROL_QUEUE, names_rule=True)
def sweep(key: ObjectKey) -> None:
    """Enqueue the objects of a rule that changed that need work now (e.g. copies of deselected objects)."""
    service = runtime.service
    rule_worker().sweep(key, lambda keys: service.add_many(keys, bulk=True), service.held)


@periodic_task("syncflow.resync")
def resync() -> int:
    """Beat: resync each rule whose period has come (missing copies, drift and orphans)."""
    settings, service = runtime.settings, runtime.service
    return rule_worker().resync(
        service.redis,
        settings.agent_name,
        settings.resync_period,
        settings.task_time_limit,
        lambda keys: service.add_many(keys, bulk=True),
        service.held,
    )


@periodic_task("syncflow.status-poll")
def status_poll() -> int:
    """Beat: re-check the reported state of each rule whose status period has come."""
    settings, service = runtime.settings, runtime.service
    return rule_worker().status_poll(
        service.redis,
        settings.agent_name,
        settings.status_period,
        settings.task_time_limit,
        lambda keys: service.add_many(keys, bulk=True),
    )


@keyed_task("poll", queue=CONTROL_QUEUE, names_rule=True)
def poll(key: ObjectKey) -> None:
    """List one polled rule's source (upsync) and enqueue the objects that changed or went; help run
    the changed ones."""
    service = runtime.service
    rule_worker().poll(key, service.add_many, service.add_seen, service.held, _help_sync)


def _help_sync(keys: Sequence[ObjectKey]) -> None:
    """Run ``sync`` keys the running task has queued in this process too (``help_here``)."""
    help_here(sync, "syncflow.sync", keys)


@periodic_task("syncflow.poll-tick")
def poll_tick() -> int:
    """Beat: start one poll per polled rule (a poll still running is not started twice: keys are leased)."""
    return runtime.service.add_many(rule_worker().poll_keys())


@periodic_task("syncflow.pump")
def pump() -> dict[str, int] | None:
    """Beat, every second: promote due retries, requeue expired leases, republish lost messages
    (one bounded run at a time; None when another run is in progress)."""
    totals = runtime.service.pump()
    if totals is None:
        return None
    if totals != PumpTotals():
        log_event(logger, "queue.pumped", **asdict(totals))
    return asdict(totals)


@app.task(name="syncflow.replay", throws=(LookupError,), syncflow_queue=CONTROL_QUEUE)  # type: ignore[untyped-decorator]
def replay(key: str) -> bool:
    """Unpark ``key`` and process it again (the task Flower's send-task can call); a key that is not
    parked fails the task, so Flower shows that nothing happened."""
    if not runtime.service.replay(key):
        raise LookupError(f"key {key} is not parked")
    log_event(logger, "failures.replayed", key=key)
    return True
