"""Periodic resync: per rule, list both sides once and enqueue only what needs work.

A source object whose copy is missing, that is being deleted while its copy is still there, whose
content drifted from the last-applied state (an event was missed) or, for a rule that reverts drift,
whose copy was edited, and a copy whose source object is not listed (a possible orphan), get a key in
the bulk lane. The sync task then decides with a direct
GET: an orphan's copy is deleted only if that GET confirms the source object is gone, never on the
strength of this list. A source object without a copy whose key the queue already holds (pending,
leased or backing off) is left to that run, and so is one whose copy a second list of the copies
finds (it was synced while the first lists ran): a resync overlapping a burst of new objects must not
run their keys twice. A key a Redis wipe lost is neither, so it is enqueued. Each rule is resynced
every ``resync_period`` with ±10% jitter, so resyncs of many rules spread out; beat ticks often and
a Redis key per rule says when its next resync is due (safe when two beats run).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from redis import Redis

from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.refs import ObjectRef
from syncflow.mutation.base import MutationError
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import agent_prefix
from syncflow.sync import filters, state, transforms
from syncflow.sync.desired import managed_content
from syncflow.sync.endpoints import Endpoints
from syncflow.sync.keys import RELATED, STATUS, SYNC, key_for, owner_ref, source_ref
from syncflow.sync.merge import carries
from syncflow.sync.metadata import AGENT_LABEL, STATE_SECRET_LABEL
from syncflow.sync.reconciler import SOURCE_VERSION_ANNOTATION
from syncflow.sync.related.index import RelatedIndex
from syncflow.sync.rule import SyncRule
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.resync")

JITTER = 0.1
PAGE_SIZE = "500"

Held = Callable[[set[ObjectKey]], set[ObjectKey]]
"""Which of these keys the queue holds (pending, leased or backing off)."""


def _schedule_key(agent: str, rule: str, kind: str) -> str:
    return f"{agent_prefix(agent)}{kind}:{rule}"


def due(redis: Redis, agent: str, rule: str, period: float, claim: float, kind: str = "resync") -> bool:
    """Whether the ``kind`` pass (resync, status) of ``rule`` is due now; if so, claim it (atomically)
    for ``claim`` seconds, the longest a pass may run: a pass that fails or dies is retried once its
    claim has expired, a complete one calls :func:`schedule_next`."""
    key = _schedule_key(agent, rule, kind)
    return bool(redis.set(key, int(time.time()), nx=True, px=int(min(claim, period) * 1000)))


def schedule_next(redis: Redis, agent: str, rule: str, period: float, kind: str = "resync") -> None:
    """After a complete ``kind`` pass of ``rule``: the next one is due in ``period`` (±10%)."""
    next_in = period * random.uniform(1 - JITTER, 1 + JITTER)
    redis.set(_schedule_key(agent, rule, kind), int(time.time()), px=int(next_in * 1000))


def list_all(api: JsonApi, path: str, **query: str) -> list[dict[str, Any]]:
    """Every object of a collection, page by page."""
    items: list[dict[str, Any]] = []
    token = ""
    while True:
        page = api.get(path, limit=PAGE_SIZE, **query, **({"continue": token} if token else {}))
        items.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue", "")
        if not token:
            return items


def _drifted(
    rule: SyncRule,
    sources: list[dict[str, Any]],
    copies: dict[ObjectRef, dict[str, Any]],
    states: dict[str, dict[str, Any]],
) -> set[ObjectRef]:
    """Source objects whose managed content differs from the last-applied state (missed events), whose
    copy no longer carries that state when the rule reverts drift (an edit of the copy whose event was
    missed), or whose mutations fail (the sync reports why)."""
    drifted = set()
    resource = rule.source.resource
    for obj in sources:
        ref = source_ref(rule, ObjectRef.of(obj))
        secret = states.get(
            state.state_secret_name(ref.cluster, resource.api_version, resource.kind, ref.namespace, ref.name)
        )
        last = state.read_state(secret, state.state_key(ref.cluster, "", ref.namespace, ref.name))
        try:
            current = managed_content(transforms.of_rule(rule, obj, copies.get(ref)))
        except MutationError:
            drifted.add(ref)
            continue
        if last is None:
            continue
        edited = rule.drift == "revert" and not carries(copies[ref], last)
        if edited or state.go_json(last) != state.go_json(current):
            drifted.add(ref)
    return drifted


@dataclass(frozen=True)
class Listing:
    """Both sides of a rule as listed once: source objects (by ref) and copies (by their source's ref)."""

    sources: dict[ObjectRef, dict[str, Any]]
    copies: dict[ObjectRef, dict[str, Any]]


def list_copies(rule: SyncRule, endpoints: Endpoints) -> dict[ObjectRef, dict[str, Any]]:
    """The rule's copies on its target, by their source object's ref."""
    target = endpoints.api(rule.target.endpoint, rule.target.cluster or "")
    return {
        owner: obj
        for obj in list_all(target, rule.target.resource.path(), labelSelector=f"{AGENT_LABEL}={rule.agent}")
        if (owner := owner_ref(obj)) is not None
    }


def list_sides(rule: SyncRule, endpoints: Endpoints) -> Listing:
    """List the rule's copies, then its source objects (its label selector applied by the server).

    Copies first: a copy's source object existed when the copy was listed, so a copy whose source is
    not listed after it is one whose source went; listed the other way round, every object created
    and synced between the two lists would look like an orphan."""
    copies = list_copies(rule, endpoints)
    selector = {"labelSelector": rule.selector.labels} if rule.selector.labels else {}
    sources = {
        source_ref(rule, ObjectRef.of(obj)): obj
        for api in endpoints.everywhere(rule.source.endpoint)
        for obj in list_all(api, rule.source.resource.path(), **selector)
    }
    return Listing(sources, copies)


def keys_needing_work(
    rule: SyncRule,
    endpoints: Endpoints,
    index: RelatedIndex | None = None,
    held: Held = lambda keys: set(),
) -> set[ObjectKey]:
    """Keys of source objects without a copy (unless ``held`` says the queue holds the key, or a second
    list of the copies finds one), being deleted or drifted from their state, and of copies whose source
    object was not listed (possible orphans); with related resources, also the ``related`` keys of
    objects without a copy (they wait for it) or without an entry in the related index."""
    listing = list_sides(rule, endpoints)
    listed, copies = set(listing.sources), listing.copies
    # the server applied the label selector; the rest (names, namespaces, fields) is applied here, so
    # an object the rule does not select costs nothing, and one it stopped selecting is released
    candidates = {ref for ref, obj in listing.sources.items() if filters.may_select(rule, obj)}
    deselected = {ref for ref, obj in listing.sources.items() if ref not in candidates and rule.holds(obj)}
    missing = candidates - copies.keys()
    drifted: set[ObjectRef] = set()
    if rule.state_namespace is not None:
        target = endpoints.api(rule.target.endpoint, rule.target.cluster or "")
        secrets = list_all(
            target,
            f"/api/v1/namespaces/{rule.state_namespace}/secrets",
            labelSelector=f"{STATE_SECRET_LABEL}=true",
        )
        states = {str(s["metadata"]["name"]): s for s in secrets}
        with_copy = [o for ref, o in listing.sources.items() if ref in copies]
        drifted = _drifted(rule, with_copy, copies, states)
    # a source being deleted that still has its copy: its deletion event may have been lost (e.g. Redis
    # wiped), and nothing else would ever delete the copy and release the source's finalizer
    deleting = {ref for ref, obj in listing.sources.items() if obj["metadata"].get("deletionTimestamp")}
    # a finalizer of an earlier version (e.g. another key formula) is replaced by the next sync
    migrating = {ref for ref, obj in listing.sources.items() if _holds_previous(rule, obj)}
    keys = _unattended(rule, endpoints, missing, held) | {
        key_for(SYNC, rule, ref)
        for ref in (copies.keys() - listed) | (deleting & copies.keys()) | drifted | migrating | deselected
    }
    if rule.related and index is not None:
        keys.update(key_for(RELATED, rule, ref) for ref in missing)
        keys.update(index.unrecorded(sorted(key_for(RELATED, rule, ref) for ref in listed & copies.keys())))
    return keys


def _holds_previous(rule: SyncRule, obj: dict[str, Any]) -> bool:
    held = obj["metadata"].get("finalizers") or ()
    return any(finalizer in held for finalizer in rule.previous_finalizers)


def _unattended(rule: SyncRule, endpoints: Endpoints, missing: set[ObjectRef], held: Held) -> set[ObjectKey]:
    """Keys of the source objects in ``missing`` (listed without a copy) that nothing will sync: the
    queue does not hold them, and a second list of the copies still finds none (no second list when
    the queue holds them all)."""
    by_key = {key_for(SYNC, rule, ref): ref for ref in missing}
    unheld = set(by_key) - held(set(by_key))
    if not unheld:
        return unheld
    copied = list_copies(rule, endpoints)
    return {key for key in unheld if by_key[key] not in copied}


def _made_from(copy: dict[str, Any]) -> str | None:
    """The resourceVersion of the source object a polled rule's copy was made from."""
    return (copy["metadata"].get("annotations") or {}).get(SOURCE_VERSION_ANNOTATION)


@dataclass(frozen=True)
class PollChanges:
    """What one poll of a rule found: ``seen``, selected source objects (as listed, by key) without a
    copy or whose copy holds another version of them, ``uncopied`` the keys of those without a copy,
    and ``gone`` the keys of copies whose source was not listed (gone, after a successful list)."""

    seen: dict[ObjectKey, dict[str, Any]]
    uncopied: set[ObjectKey]
    gone: set[ObjectKey]


def poll_changes(rule: SyncRule, endpoints: Endpoints) -> PollChanges:
    """For a polled source (upsync): what changed since the copies were made (see ``PollChanges``)."""
    listing = list_sides(rule, endpoints)
    seen: dict[ObjectKey, dict[str, Any]] = {}
    uncopied: set[ObjectKey] = set()
    for ref, obj in listing.sources.items():
        copy = listing.copies.get(ref)
        if copy is None and not filters.concerns(rule, obj):
            continue
        if copy is not None and _made_from(copy) == obj["metadata"].get("resourceVersion"):
            continue
        key = key_for(SYNC, rule, ref)
        seen[key] = obj
        if copy is None:
            uncopied.add(key)
    gone = {key_for(SYNC, rule, ref) for ref in set(listing.copies) - set(listing.sources)}
    return PollChanges(seen, uncopied, gone)


def status_keys(rule: SyncRule, endpoints: Endpoints) -> set[ObjectKey]:
    """Keys of source objects whose copy reports a status they do not show yet (the status poll)."""
    listing = list_sides(rule, endpoints)
    return {
        key_for(STATUS, rule, ref)
        for ref, copy in listing.copies.items()
        if ref in listing.sources
        and filters.returns_status(rule, listing.sources[ref])
        and "status" in copy
        and copy["status"] != listing.sources[ref].get("status")
    }


Finder = Callable[[SyncRule, Endpoints], set[ObjectKey]]


def resync(
    rules: Iterable[SyncRule],
    endpoints: Endpoints,
    enqueue: Callable[[set[ObjectKey]], object],
    find: Finder = keys_needing_work,
    kind: str = "resync",
    finished: Callable[[SyncRule], object] = lambda rule: None,
) -> int:
    """Enqueue (bulk) what ``find`` says each rule needs, calling ``finished`` after each rule's
    complete pass; returns the number of keys."""
    total = 0
    for rule in rules:
        found = find(rule, endpoints)
        if found:
            enqueue(found)
        total += len(found)
        finished(rule)
        log_event(logger, "resync.done", rule=rule.name, kind=kind, enqueued=len(found))
    return total
