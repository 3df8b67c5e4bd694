"""The engine's task bodies in a worker process: look the key's rule up, then sync or return status.

A key whose rule is pending or unknown comes back later (a transient error backs it off; the rule's
watch start re-adds every key at once when it becomes ready); only a rule the registry says is gone
ends its keys. What a gone rule made is released by its ``release`` key: every finalizer it holds on
source objects, and — when the rule's ``release`` policy says ``delete`` — its copies, where the target
can be reached (an unreachable target never keeps a finalizer held).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow.metrics import record as metrics
from syncflow.queue import gone
from syncflow.queue.errors import RequeueAfter, TransientError, classify, describe
from syncflow.queue.keys import ObjectKey
from syncflow.queue.workqueue import Outcome
from syncflow.sync import reconciler
from syncflow.sync import resync as resync_mod
from syncflow.sync.endpoints import EndpointError, Endpoints
from syncflow.sync.keys import SYNC, key_for, poll_key
from syncflow.sync.ownership import Reach
from syncflow.sync.reconciler import Sync, release_all, release_unselected, return_status, sync_object
from syncflow.sync.registry import RELEASED, RuleRegistry, needs_release
from syncflow.sync.related.index import RelatedIndex
from syncflow.sync.related.reconcile import release_related, release_rule, sync_related
from syncflow.sync.rule import SyncRule
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.sync")

Enqueue = Callable[[Iterable[ObjectKey]], object]
AddSeen = Callable[[Mapping[ObjectKey, bytes], str, Collection[ObjectKey]], object]
"""Adds keys with their objects as seen on an endpoint (encoded by ``snapshots.listed``), marking those
listed without a copy (``QueueService.add_seen``)."""
Help = Callable[[Sequence[ObjectKey]], object]
"""Runs some of the keys just queued in this task too (``syncflow.queue.execute.help_run``)."""


RELEASE_WAIT = 1.0
"""Seconds a release waits before it looks again for runs of its rule that are still going."""
RELEASE_GRACE = 10.0
"""Seconds a rule must stay gone before its ``release`` key releases it: a rule that goes and comes
back within a few watcher passes (e.g. a config replaced by another) never loses its copies."""

FORBIDDEN = "forbidden:"
"""Cause of a 403 from a rule's source in one logical cluster (``forbidden:<cluster>``): e.g. a permission
claim not accepted yet in that workspace; its keys are retried when the workspace's binding changes."""


@contextlib.contextmanager
def forbidden_cause(rule: SyncRule, key: ObjectKey) -> Iterator[None]:
    """Name the cause of a 403 the rule's source endpoint answers, so the key is retried when it goes."""
    try:
        yield
    except ApiException as exc:
        if exc.status == 403 and getattr(exc, "endpoint", "") == rule.source.endpoint:
            exc.cause = f"{FORBIDDEN}{key.cluster}"  # type: ignore[attr-defined]
        raise


@dataclass
class RuleWorker:
    """What engine tasks need in one worker process."""

    registry: RuleRegistry
    endpoints: Endpoints
    rules_running: Callable[[], set[str]]
    """The rules whose sync or related keys are being run (leased) now."""
    reach: Reach = field(default_factory=Reach)
    """The system namespaces this deployment opened."""

    def _index(self, rule: SyncRule) -> RelatedIndex:
        return RelatedIndex(self.registry.redis, rule.agent)

    def _sync(self, rule: SyncRule) -> Sync:
        release = functools.partial(release_related, self._index(rule)) if rule.related else None
        return Sync(rule, self.endpoints, release_related=release, reach=self.reach)

    def _lookup(self, key: ObjectKey) -> Sync | None:
        entry = self.registry.lookup(key.rule)
        if entry.state == "gone":
            log_event(logger, "sync.rule_gone", key=str(key))
            gone.mark()
            return None
        if entry.state != "ready" or entry.rule is None:
            raise TransientError(f"rule {key.rule} is not ready: {entry.reason}")
        return self._sync(entry.rule)

    def sync(self, key: ObjectKey) -> None:
        """Sync one source object (spec, status, deletion)."""
        s = self._lookup(key)
        if s is not None:
            with forbidden_cause(s.rule, key), metrics.sync_run(s.rule.source.resource.group_resource):
                sync_object(s, key)

    def status(self, key: ObjectKey) -> None:
        """Return a copy's status to its source object."""
        s = self._lookup(key)
        if s is not None:
            with forbidden_cause(s.rule, key), metrics.sync_run(s.rule.source.resource.group_resource):
                return_status(s, key)

    def related(self, key: ObjectKey) -> None:
        """Sync the related objects of one source object."""
        s = self._lookup(key)
        if s is not None:
            with forbidden_cause(s.rule, key):
                sync_related(s, key, self._index(s.rule))

    def quiesce(self, rules: Iterable[SyncRule], *, mark: bool = True) -> None:
        """Mark ``rules`` gone (no new run of theirs starts; ``mark=False``: they are gone already),
        then raise ``RequeueAfter`` while a run of any of them is still going: a run claimed before may
        still add a finalizer, which a release must see. Call it for all the rules a task releases
        before releasing the first."""
        names = {rule.name for rule in rules}
        for name in sorted(names) if mark else ():
            self.registry.mark_gone(name)
        running = sorted(names & self.rules_running())
        if running:
            log_event(logger, "sync.release_waits", rules=",".join(running), retry_in_s=RELEASE_WAIT)
            raise RequeueAfter(RELEASE_WAIT)

    def release(self, rule: SyncRule, *, remove_copies: bool = False, gone_already: bool = False) -> int:
        """Release ``rule`` (``quiesce`` first): its finalizer on every source object and on the
        related objects its index recorded there; with ``remove_copies`` first delete every copy it
        made on the target. Afterwards the rule's entry says so (``RELEASED``) until the watcher
        publishes the rule again. ``gone_already``: the watcher marked it gone, and may publish it
        again meanwhile, which no mark of this release overwrites."""
        self.quiesce([rule], mark=not gone_already)
        s = self._sync(rule)
        if remove_copies:
            _remove_copies(s)
        released = release_rule(s, self._index(rule)) + sum(
            release_all(s, api, lambda ref: key_for(SYNC, rule, ref))
            for api in self.endpoints.everywhere(rule.source.endpoint)
        )
        self.registry.mark_gone(rule.name, RELEASED, only_if_gone=gone_already)
        return released

    def known_rules(self) -> list[SyncRule]:
        """Every rule the registry knows and has not released (ready, pending or gone)."""
        return [
            entry.rule
            for entry in self.registry.entries().values()
            if entry.rule is not None and (entry.state != "gone" or needs_release(entry))
        ]

    def retire(self, rules: list[SyncRule]) -> int:
        """Release ``rules`` now, their copies kept or deleted by each rule's ``release`` policy (an
        owner being deleted: every rule is quiesced before the first is released); returns the objects
        released."""
        self.quiesce(rules)
        return sum(self.release(rule, remove_copies=rule.release == "delete") for rule in rules)

    def release_gone(self, key: ObjectKey) -> int:
        """The ``release`` key of a rule that went away: release it (its copies kept or deleted by its
        ``release`` policy), unless it is back or released already; returns the objects released."""
        entry = self.registry.lookup(key.rule)
        if not needs_release(entry) or entry.rule is None:
            return 0
        gone_for = time.time() - entry.at
        if gone_for < RELEASE_GRACE:
            raise RequeueAfter(RELEASE_GRACE - gone_for)
        rule = entry.rule
        released = self.release(rule, remove_copies=rule.release == "delete", gone_already=True)
        log_event(logger, "sync.rule_released", rule=key.rule, objects=released)
        return released

    def release_unselected(self, rule: SyncRule) -> int:
        """Stop syncing every source object of ``rule`` that holds its finalizer but is no longer
        selected (its copy deleted when the rule deletes unmatched copies); returns how many."""
        s = self._sync(rule)
        return sum(release_unselected(s, api) for api in self.endpoints.everywhere(rule.source.endpoint))

    def sweep(self, key: ObjectKey, enqueue: Enqueue, held: resync_mod.Held) -> None:
        """The ``sweep`` key of a rule that changed: enqueue its objects that need work now — copies of
        objects it no longer selects, objects it newly selects, finalizers of an earlier version."""
        s = self._lookup(key)
        if s is not None:
            resync_mod.resync([s.rule], self.endpoints, enqueue, self._work_finder(held), "sweep")

    def _work_finder(self, held: resync_mod.Held) -> resync_mod.Finder:
        """What a resync or sweep of a rule enqueues (``keys_needing_work`` with the rule's index)."""

        def find_work(rule: SyncRule, endpoints: Endpoints) -> set[ObjectKey]:
            return resync_mod.keys_needing_work(rule, endpoints, self._index(rule), held)

        return find_work

    def resync(
        self, redis: Redis, agent: str, period: float, claim: float, enqueue: Enqueue, held: resync_mod.Held
    ) -> int:
        """Resync every watched ready rule whose period has come (missing copies the queue does not
        already hold, drift, orphans); a rule whose pass does not complete is due again after ``claim``
        seconds."""
        rules = [
            rule
            for rule in self.registry.ready_rules()
            if rule.watch_source and resync_mod.due(redis, agent, rule.name, period, claim)
        ]

        def finished(rule: SyncRule) -> None:
            resync_mod.schedule_next(redis, agent, rule.name, period)

        return (
            resync_mod.resync(rules, self.endpoints, enqueue, self._work_finder(held), finished=finished)
            if rules
            else 0
        )

    def status_poll(self, redis: Redis, agent: str, period: float, claim: float, enqueue: Enqueue) -> int:
        """Enqueue status keys of copies whose status the source does not show yet (the fallback when
        a target watch missed an event); a rule whose pass does not complete is due again after
        ``claim`` seconds."""
        rules = [
            rule
            for rule in self.registry.ready_rules()
            if rule.status == "return"
            and resync_mod.due(redis, agent, rule.name, period, claim, kind="status")
        ]

        def finished(rule: SyncRule) -> None:
            resync_mod.schedule_next(redis, agent, rule.name, period, kind="status")

        return (
            resync_mod.resync(rules, self.endpoints, enqueue, resync_mod.status_keys, "status", finished)
            if rules
            else 0
        )

    def poll_keys(self) -> list[ObjectKey]:
        """One ``poll`` key per ready rule whose source is polled rather than watched (upsync)."""
        return [poll_key(rule) for rule in self.registry.ready_rules() if not rule.watch_source]

    def poll(
        self, key: ObjectKey, enqueue: Enqueue, add_seen: AddSeen, held: resync_mod.Held, help_run: Help
    ) -> None:
        """List a polled rule's source and copies once; enqueue the objects that went, and add those
        that changed with each object as listed (``add_seen``: its snapshot, so its sync need not read
        it again), then help run those (``help_run``) while the worker pool takes them too."""
        s = self._lookup(key)
        if s is None:
            return
        changes = resync_mod.poll_changes(s.rule, self.endpoints, held)
        if changes.gone or changes.unseen:
            enqueue(changes.gone | changes.unseen)
        if changes.seen:
            add_seen(changes.seen, s.rule.source.endpoint, changes.uncopied)
        enqueued = len(changes.seen) + len(changes.gone) + len(changes.unseen)
        log_event(logger, "resync.done", rule=s.rule.name, kind="poll", enqueued=enqueued)
        if changes.seen:
            help_run(list(changes.seen))


def _remove_copies(s: Sync) -> None:
    """Delete every copy the rule made; a target that cannot be reached keeps its copies (logged), so
    that releasing the finalizers never waits for it."""
    try:
        removed = reconciler.remove_copies(s)
    except Exception as exc:
        unreachable = isinstance(exc, EndpointError) or (
            not isinstance(exc, ApiException) and classify(exc) == Outcome.TRANSIENT
        )
        if not unreachable:
            raise
        log_event(
            logger,
            "sync.copies_abandoned",
            level=logging.WARNING,
            rule=s.rule.name,
            target=s.rule.target.endpoint,
            error=f"{type(exc).__name__}: {describe(exc)}",
        )
        return
    log_event(logger, "sync.copies_removed", rule=s.rule.name, copies=removed)
