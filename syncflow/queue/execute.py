"""One keyed task run: for each key of its message, claim → handler → done, with lease renewal and
one log line per outcome."""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass

from redis.exceptions import RedisError

from syncflow.kube import echoes, snapshots
from syncflow.metrics import record as metrics
from syncflow.queue import gone, ruleentries
from syncflow.queue.errors import RequeueAfter, classify
from syncflow.queue.keys import InvalidKeyError, ObjectKey
from syncflow.queue.registry import rule_of
from syncflow.queue.renewer import LeaseRenewer
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Claim, Outcome, RunEnd, Taken, WorkQueue
from syncflow.util.deadline import deadline
from syncflow.util.logs import log_event
from syncflow.util.neterrors import describe
from syncflow.util.truncate import truncate, truncate_lines

logger = logging.getLogger("syncflow.task")

Handler = Callable[[ObjectKey], None]
"""Processes one key. Raise ``RequeueAfter`` to come back later, any other exception to fail."""

REQUEST_SHARE = 0.8
"""Share of the task time limit a handler's API requests may use (Celery's soft limit is at 0.9):
each request's timeouts are cut to the time left, so slow calls end as timeouts, not time limits."""
START_SHARE = 0.25
"""Share of the task time limit within which a message's later keys may start: past it the keys not
started go back to the broker in a new message, so each key keeps at least 0.55 of the limit."""
HELPERS = 4
"""Threads with which a task runs keys it queued itself (``help_run``): a poll's new objects."""
HELP_SECONDS = 10.0
"""How long a task starts keys it queued itself: a long backlog stays with the worker pool."""
KEYS_PER_MESSAGE = 8
"""Most keys a message of a small send carries. A task runs its keys one after another, each claimed,
leased, logged and acknowledged on its own, so a message's last key waits for the others: 8 keys of
a typical sync (10-20 ms each) add at most ~0.15 s, and spread Celery's per-message cost over 8."""
LARGE_MESSAGE = KEYS_PER_MESSAGE
"""A message of more keys comes from a large send (a poll's, relist's or resync's). It first asks, in
one call, which of its keys their queues still hold: the others are stale (run by a task that helped,
or by an earlier copy of the message) and skipped without a claim each. It starts keys for
``SLICE`` seconds at most, then puts the rest back in the broker in a new message."""
SLICE = 0.15
"""Seconds a large message starts keys for: a change queued meanwhile waits no longer behind it than
behind a message of 8 keys (10-20 ms each)."""

_LEVELS = {
    Outcome.OK: logging.INFO,
    Outcome.AFTER: logging.INFO,
    Outcome.TRANSIENT: logging.WARNING,
    Outcome.ERROR: logging.WARNING,
    Outcome.PERMANENT: logging.ERROR,
}


RUN_SEPARATOR = "#"
"""Separates the Celery task id from the nonce of one run in a lease token (task ids are UUIDs)."""


def run_token(task_id: str) -> str:
    """The lease token of one run of a message: its Celery task id and a nonce. A claim that finds
    its own token on a live lease is its own retry (see claim.lua); a redelivered copy of the message
    has another nonce, so it never enters a key the first copy still holds."""
    return f"{task_id}{RUN_SEPARATOR}{secrets.token_hex(6)}"


def task_of(token: str) -> str:
    """The Celery task id in a lease token (the whole token if it has no nonce)."""
    return token.partition(RUN_SEPARATOR)[0]


@dataclass(frozen=True)
class RunReport:
    """What happened to one key of a message: ``outcome`` is an ``Outcome`` value, invalid-key, busy,
    stale or gone."""

    outcome: str
    state: str = ""
    error: Exception | None = None
    key: str = ""
    """The key as its message gave it."""


def run_message(
    service: QueueService,
    renewer: LeaseRenewer,
    handler: Handler,
    raw_keys: Sequence[str],
    token: str,
    celery_queue: str,
) -> list[RunReport]:
    """Process the keys of one message delivered on ``celery_queue``, one after another, leasing them
    with ``token`` (``run_token`` of the Celery task id); returns a report per key started. A key's
    ``done`` also claims the next key (one round trip) while the message is within ``START_SHARE`` of
    its time (``SLICE`` for a large message); the keys it does not reach go back to the broker in a
    new message."""
    limit = service.settings.task_time_limit
    with _task_started() as started:
        large = len(raw_keys) > LARGE_MESSAGE
        stale = _not_held(service, raw_keys) if large else set()
        start_by = started + limit * START_SHARE
        ran = iter(
            _run_keys(
                service,
                renewer,
                handler,
                [raw for raw in raw_keys if raw not in stale],
                token,
                min(start_by, started + SLICE) if large else start_by,
                lambda rest: _resend(service, rest, celery_queue, logging.DEBUG if large else logging.INFO),
            )
        )
        reports: list[RunReport] = []
        for raw in raw_keys:  # in the message's order, up to the first key not started in time
            report = RunReport(Claim.STALE.value, key=raw) if raw in stale else next(ran, None)
            if report is None:
                break
            reports.append(report)
        return reports


def _not_held(service: QueueService, raw_keys: Sequence[str]) -> set[str]:
    """The keys of a message that their queues no longer hold (one call per queue): a claim would
    find each stale, so each counts as a stale claim would."""
    keys = {key for raw in raw_keys if (key := _parsed(raw)) is not None}
    not_held = keys - service.held(keys)
    stale = {str(key) for key in not_held}
    if stale:
        service.count_stale(not_held)
        log_event(
            logger, "task.skipped", level=logging.DEBUG, key=min(stale), keys=len(stale), reason="stale"
        )
    return stale


def help_run(
    service: QueueService, renewer: LeaseRenewer, handler: Handler, keys: Sequence[ObjectKey], token: str
) -> list[RunReport]:
    """Run, in the current task, keys it has just queued (their messages are out), ``HELPERS`` at a
    time, from the last one queued backwards, while other processes take them from the front: a key
    claimed here makes its message stale, one claimed elsewhere is skipped here. Stops starting keys
    after ``HELP_SECONDS`` (or the task's ``START_SHARE``): the rest stay with their messages. Returns
    a report per key started."""
    limit = service.settings.task_time_limit
    started = _started.get() or time.monotonic()
    until = min(started + limit * START_SHARE, time.monotonic() + HELP_SECONDS)
    backwards = [str(key) for key in reversed(keys)]
    shares = [backwards[i::HELPERS] for i in range(HELPERS)]
    with ThreadPoolExecutor(HELPERS, thread_name_prefix="help") as pool:
        runs = [
            pool.submit(_run_keys, service, renewer, handler, share, token, until, lambda rest: None, started)
            for share in shares
            if share
        ]
        return [report for run in runs for report in run.result()]


_started: ContextVar[float | None] = ContextVar("syncflow_task_started", default=None)
"""When the keyed task running in this context started (``time.monotonic``)."""


@contextlib.contextmanager
def _task_started() -> Iterator[float]:
    started = time.monotonic()
    reset = _started.set(started)
    try:
        yield started
    finally:
        _started.reset(reset)


def _run_keys(
    service: QueueService,
    renewer: LeaseRenewer,
    handler: Handler,
    raw_keys: Sequence[str],
    token: str,
    start_by: float,
    late: Callable[[Sequence[str]], None],
    started: float | None = None,
) -> list[RunReport]:
    """claim → handler → done for each key in turn, the next claim made by each done; a key not
    started by ``start_by`` (``time.monotonic``) and the rest go to ``late``. Requests may use
    ``REQUEST_SHARE`` of the task time limit from ``started`` (default: now)."""
    limit = service.settings.task_time_limit
    started = time.monotonic() if started is None else started
    reports: list[RunReport] = []
    claimed: Taken | None = None  # this key's claim, made by the previous key's done
    for i, raw_key in enumerate(raw_keys):
        if i and claimed is None and time.monotonic() > start_by:
            late(raw_keys[i:])
            break
        following = _parsed(raw_keys[i + 1]) if i + 1 < len(raw_keys) else None
        request_time = limit * REQUEST_SHARE - (time.monotonic() - started)
        report, claimed = _run_key(
            service,
            renewer,
            handler,
            raw_key,
            token,
            request_time,
            claimed,
            following,
            lambda: time.monotonic() <= start_by,
        )
        reports.append(report)
    return reports


def _resend(service: QueueService, raw_keys: Sequence[str], celery_queue: str, level: int) -> None:
    """Put the keys a message's time did not reach back in the broker (invalid ones have their line)."""
    keys = [key for raw in raw_keys if (key := _parsed(raw)) is not None]
    if keys:
        service.resend(keys, celery_queue)
        log_event(logger, "task.resent", level=level, key=str(keys[0]), keys=len(keys), queue=celery_queue)


def _parsed(raw_key: str) -> ObjectKey | None:
    try:
        return ObjectKey.parse(raw_key)
    except InvalidKeyError:
        return None


def run_keyed(
    service: QueueService,
    renewer: LeaseRenewer,
    handler: Handler,
    raw_key: str,
    token: str,
    request_time: float | None = None,
) -> RunReport:
    """Process ``raw_key`` of a message delivered with ``token`` (the Celery task id); its API
    requests may take ``request_time`` seconds (default: ``REQUEST_SHARE`` of the task time limit)."""
    if request_time is None:
        request_time = service.settings.task_time_limit * REQUEST_SHARE
    report, _ = _run_key(service, renewer, handler, raw_key, token, request_time, None, None, lambda: False)
    return report


def _run_key(
    service: QueueService,
    renewer: LeaseRenewer,
    handler: Handler,
    raw_key: str,
    token: str,
    request_time: float,
    taken: Taken | None,
    following: ObjectKey | None,
    claim_following: Callable[[], bool],
) -> tuple[RunReport, Taken | None]:
    """claim (unless ``taken`` holds the claim already) → handler → done; the done also claims
    ``following`` when it shares the key's queue and ``claim_following()`` says so. Returns the
    report and that claim, if made."""
    try:
        key = ObjectKey.parse(raw_key)
    except InvalidKeyError as exc:
        log_event(logger, "task.invalid_key", level=logging.ERROR, key=raw_key, error=str(exc))
        return RunReport("invalid-key", key=raw_key), None
    queue = service.queue_for(key)
    if taken is None:
        taken = queue.take(key, token)
    if taken.claim is not Claim.CLAIMED:
        level = logging.INFO if taken.claim is Claim.GONE else logging.DEBUG
        log_event(logger, "task.skipped", level=level, key=raw_key, reason=taken.claim.value)
        return RunReport(taken.claim.value, key=raw_key), None
    queued_at = None
    if taken.waited is not None:
        metrics.queue_waited(queue.name, taken.waited)
        queued_at = time.time() - taken.waited

    started = time.monotonic()
    error: Exception | None = None
    with (
        renewer.hold(queue, key, token),
        deadline(request_time),
        echoes.collect() as own_writes,
        snapshots.delivered(taken.snapshot),
        ruleentries.delivered(rule_of(key), taken.rule_entry),
        metrics.key_queued_at(queued_at, service.settings.mode),
        gone.tracking() as found_gone,
    ):
        try:
            handler(key)
        except Exception as exc:
            error = exc
    outcome = Outcome.OK if error is None else classify(error)
    after = error.seconds if isinstance(error, RequeueAfter) else 0.0
    payload = "" if error is None or outcome is Outcome.AFTER else _payload(error, outcome, token)
    cause = str(getattr(error, "cause", None) or "")
    end = RunEnd(outcome, after, payload, cause, own_writes, gone=found_gone.gone)
    next_claim: Taken | None = None
    if following is not None and service.queue_for(following) is queue and claim_following():
        result, next_claim = queue.finish_claim(key, token, end, following)
    else:
        result = queue.finish(key, token, end)
    if outcome is Outcome.OK and found_gone.also:
        with contextlib.suppress(RedisError):  # only the console's record: never fail a done run for it
            service.forget_synced(found_gone.also)
    worked = time.monotonic() - started
    metrics.queue_worked(queue.name, worked)
    if result.retried:
        metrics.queue_retried(queue.name)
    try:
        service.publish(queue.name, [(key, result.lane)])
    except BaseException:
        if following is not None and next_claim is not None and next_claim.claim is Claim.CLAIMED:
            _give_back(service, queue, following, token)
        raise

    fields: dict[str, object] = {
        "key": raw_key,
        "outcome": outcome.value,
        "state": result.state,
        "duration_ms": round(worked * 1000, 1),
    }
    if result.attempts:
        fields["attempts"] = result.attempts
    if result.delay:
        fields["retry_in_s"] = result.delay
    if error is not None and outcome is not Outcome.AFTER:
        fields["error"] = f"{type(error).__name__}: {describe(error)}"
    if cause:
        fields["cause"] = cause
    log_event(logger, "task.done", level=_LEVELS[outcome], **fields)
    report = RunReport(outcome.value, result.state, None if outcome is Outcome.AFTER else error, raw_key)
    return report, next_claim


def _give_back(service: QueueService, queue: WorkQueue, key: ObjectKey, token: str) -> None:
    """Release a key claimed for a run that will not start (its message ends in an error) rather than
    leave it leased until its lease expires as a strike: due again at once (the next pump publishes
    it), or pending again if an event came meanwhile (published now if the broker takes it, else by
    the pump after its grace). The claim took the key's snapshot: its run reads the object."""
    with contextlib.suppress(Exception):  # Redis away too: the lease expires and the pump requeues
        result = queue.finish(key, token, RunEnd(Outcome.AFTER))
        service.publish(queue.name, [(key, result.lane)])


def out_of_time(
    service: QueueService, raw_keys: Sequence[str], task_id: str, error: Exception, celery_queue: str
) -> None:
    """The worker's side of a hard time limit: the handler's process was killed mid-run, so release
    the lease of the key it was running (held by a run of task ``task_id``) and back that key off;
    the message's other keys (done, or not started) go back to the broker. A timeout is transient: it
    never parks the key (a key that kills its process by other means, e.g. OOM, still strikes when
    its lease expires)."""
    keys = [key for raw in raw_keys if (key := _parsed(raw)) is not None]
    owners = {key: service.queue_for(key).owner(key) for key in keys}
    running = {key: token for key, token in owners.items() if token is not None and task_of(token) == task_id}
    service.resend([key for key in keys if key not in running], celery_queue)
    for key, token in running.items():
        _timed_out(service, key, token, error)


def _timed_out(service: QueueService, key: ObjectKey, token: str, error: Exception) -> None:
    queue = service.queue_for(key)
    result = queue.done(key, token, Outcome.TRANSIENT, error=_payload(error, Outcome.TRANSIENT, token))
    if result.retried:
        metrics.queue_retried(queue.name)
    service.publish(queue.name, [(key, result.lane)])
    log_event(
        logger,
        "task.done",
        level=logging.WARNING,
        key=str(key),
        outcome=Outcome.TRANSIENT.value,
        state=result.state,
        attempts=result.attempts,
        retry_in_s=result.delay,
        error=f"{type(error).__name__}: {describe(error)}",
    )


def _payload(error: Exception, outcome: Outcome, token: str) -> str:
    """The failure record stored with the key: error and traceback capped, whatever the handler raised,
    the Celery task of the run (``token``'s) and an API error's HTTP status and reason."""
    record: dict[str, object] = {
        "task": task_of(token),
        "type": type(error).__name__,
        "error": truncate(describe(error)),
        "outcome": outcome.value,
        "cause": getattr(error, "cause", None) or "",
        "traceback": truncate_lines("".join(traceback.format_exception(error))),
    }
    status = getattr(error, "status", None)
    if isinstance(status, int):  # an API error: its HTTP status and reason, for the console
        record["status"] = status
        record["reason"] = str(getattr(error, "reason", None) or "")
    return json.dumps(record)
