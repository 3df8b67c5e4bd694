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

import hashlib
import logging
import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from redis import Redis

from syncflow.kube import snapshots
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
from syncflow.sync.rule import Mutate, SyncRule
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.resync")

JITTER = 0.1
PAGE_SIZE = "500"

T = TypeVar("T")

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


def listed(
    api: JsonApi, path: str, label_selector: str = "", *, metadata_only: bool = False
) -> Iterator[dict[str, Any]]:
    """Every object of a collection, page by page (one page held at a time), without its
    ``managedFields``: no pass reads them, and they are about half of a parsed object. With
    ``metadata_only`` the server sends only each object's metadata (where it can)."""
    token = ""
    get = api.get_metadata if metadata_only else api.get
    query = {"labelSelector": label_selector} if label_selector else {}
    while True:
        page = get(path, limit=PAGE_SIZE, **query, **({"continue": token} if token else {}))
        for obj in page.get("items") or ():
            (obj.get("metadata") or {}).pop("managedFields", None)
            yield obj
        token = (page.get("metadata") or {}).get("continue", "")
        if not token:
            return


@dataclass(frozen=True)
class LastApplied:
    """What a resync holds of one state Secret while it checks drift: per data key, a digest of the
    stored content (None: unreadable), and the Secret's data as stored only for a rule that reverts
    drift (it compares the content with the copy). A pass holds every state of a rule at once, so it
    holds each one's digest, not the object stored in it."""

    digests: dict[str, bytes | None]
    data: dict[str, Any] | None = None


def last_applied(secret: dict[str, Any], with_data: bool) -> LastApplied:
    """What a resync holds of state Secret ``secret`` (``with_data`` for a rule that reverts drift)."""
    data = secret.get("data") or {}
    contents = ((key, state.read_state(secret, key)) for key in data)
    digests = {key: None if content is None else state_digest(content) for key, content in contents}
    return LastApplied(digests, data if with_data else None)


def state_digest(content: dict[str, Any]) -> bytes:
    """A digest of an object's managed content as its state stores it (Go's JSON): contents with
    equal digests compare equal as the sync compares them."""
    return hashlib.blake2b(state.go_json(content).encode(), digest_size=16).digest()


def _drifted(
    rule: SyncRule,
    ref: ObjectRef,
    obj: dict[str, Any],
    copy: dict[str, Any] | None,
    states: dict[str, LastApplied],
) -> bool:
    """Whether source object ``obj`` (with a copy) differs in its managed content from the
    last-applied state (missed events), whether its copy no longer carries that state when the rule
    reverts drift (an edit of the copy whose event was missed), or whether its mutations fail (the
    sync reports why). ``copy`` is None when the rule reads no copy's content (``reads_copies``)."""
    resource = rule.source.resource
    held = states.get(
        state.state_secret_name(ref.cluster, resource.api_version, resource.kind, ref.namespace, ref.name)
    )
    key = state.state_key(ref.cluster, "", ref.namespace, ref.name)
    last = None if held is None else held.digests.get(key)
    try:
        current = managed_content(transforms.of_rule(rule, obj, copy))
    except MutationError:
        return True
    if held is None or last is None:
        return False
    if rule.drift == "revert" and copy is not None and held.data is not None:
        stored = state.read_state({"data": held.data}, key)
        if stored is not None and not carries(copy, stored):
            return True
    return last != state_digest(current)


def reads_copies(rule: SyncRule) -> bool:
    """Whether a resync's drift check reads the copies' content, not only which exist: to tell an edit
    of a copy (the rule reverts drift) or for spec mutations (they may read the copy)."""
    return rule.drift == "revert" or any(isinstance(t, Mutate) and t.spec for t in rule.transforms)


def copy_views(
    rule: SyncRule, endpoints: Endpoints, view: Callable[[dict[str, Any]], T], metadata_only: bool = True
) -> dict[ObjectRef, T]:
    """What ``view`` keeps of each of the rule's copies on its target, by their source object's ref: a
    pass holds every copy at once, so it keeps only what it reads, and lists only the copies'
    metadata unless ``view`` reads more (``metadata_only=False``).

    A pass lists the copies before the source objects: a copy's source object existed when the copy
    was listed, so a copy whose source is not listed after it is one whose source went; listed the
    other way round, every object created and synced between the two lists would look like an orphan."""
    target = endpoints.api(rule.target.endpoint, rule.target.cluster or "")
    path, selector = rule.target.resource.path(), f"{AGENT_LABEL}={rule.agent}"
    return {
        owner: view(obj)
        for obj in listed(target, path, selector, metadata_only=metadata_only)
        if (owner := owner_ref(obj)) is not None
    }


def sources(rule: SyncRule, endpoints: Endpoints) -> Iterator[tuple[ObjectRef, dict[str, Any]]]:
    """The rule's source objects (the label selector of ``Selector.server_labels`` applied by the server)
    with their refs, a page at a time."""
    for api in endpoints.everywhere(rule.source.endpoint):
        for obj in listed(api, rule.source.resource.path(), rule.selector.server_labels or ""):
            yield source_ref(rule, ObjectRef.of(obj)), obj


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
    # Copies first (see ``copy_views``), then the state Secrets, then the source objects a page at a
    # time: only what the drift check reads of the copies, the states and refs are held at once.
    content = reads_copies(rule)
    copies: dict[ObjectRef, dict[str, Any] | None] = copy_views(
        rule, endpoints, lambda obj: obj if content else None, metadata_only=not content
    )
    states = None
    if rule.state_namespace is not None:
        target = endpoints.api(rule.target.endpoint, rule.target.cluster or "")
        secrets = listed(
            target,
            f"/api/v1/namespaces/{rule.state_namespace}/secrets",
            f"{STATE_SECRET_LABEL}=true",
        )
        states = {str(s["metadata"]["name"]): last_applied(s, rule.drift == "revert") for s in secrets}
    seen: set[ObjectRef] = set()
    missing: set[ObjectRef] = set()
    work: set[ObjectRef] = set()
    for ref, obj in sources(rule, endpoints):
        seen.add(ref)
        # the server applied the label selector; the rest (names, namespaces, fields) is applied here,
        # so an object the rule does not select costs nothing, and one it stopped selecting is released
        selected = filters.may_select(rule, obj)
        if selected and ref not in copies:
            missing.add(ref)
        # being deleted with its copy still there: its deletion event may have been lost (e.g. Redis
        # wiped), and nothing else would ever delete the copy and release the source's finalizer
        deleting = ref in copies and bool(obj["metadata"].get("deletionTimestamp"))
        if (
            (not selected and rule.holds(obj))
            or deleting
            or (ref in copies and states is not None and _drifted(rule, ref, obj, copies[ref], states))
            # a finalizer of an earlier version (e.g. another key formula) is replaced by the next sync
            or _holds_previous(rule, obj)
        ):
            work.add(ref)
    keys = _unattended(rule, endpoints, missing, held) | {
        key_for(SYNC, rule, ref) for ref in (copies.keys() - seen) | work
    }
    if rule.related and index is not None:
        keys.update(key_for(RELATED, rule, ref) for ref in missing)
        keys.update(index.unrecorded(sorted(key_for(RELATED, rule, ref) for ref in seen & copies.keys())))
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
    copied = copy_views(rule, endpoints, lambda obj: None)
    return {key for key in unheld if by_key[key] not in copied}


def _made_from(copy: dict[str, Any]) -> str | None:
    """The resourceVersion of the source object a polled rule's copy was made from."""
    return (copy["metadata"].get("annotations") or {}).get(SOURCE_VERSION_ANNOTATION)


@dataclass(frozen=True)
class PollChanges:
    """What one poll of a rule found: ``seen``, selected source objects (as listed, by key) without a
    copy or whose copy holds another version of them, ``uncopied`` the keys of those without a copy,
    and ``gone`` the keys of copies whose source was not listed (gone, after a successful list)."""

    seen: dict[ObjectKey, bytes]
    """Each object encoded as its snapshot keeps it (``snapshots.listed``)."""
    uncopied: set[ObjectKey]
    gone: set[ObjectKey]
    unseen: set[ObjectKey]
    """Keys of changed objects handed on without their object, so their syncs read them: those past
    the first ``MAX_SNAPSHOTS`` (the queue would keep no more snapshots) and those too large for one."""


def poll_changes(rule: SyncRule, endpoints: Endpoints, held: Held = lambda keys: set()) -> PollChanges:
    """For a polled source (upsync): what changed since the copies were made (see ``PollChanges``).
    An object listed without a copy is left out when nothing needs to sync it: the queue holds its key
    (``held``), or a second list of the copies finds one (synced while the first lists ran), as in a
    resync, so a poll that overlaps a long initial upsync does not sync its objects twice."""
    made_from = copy_views(rule, endpoints, _made_from)
    refs: set[ObjectRef] = set()
    # only what a poll hands on is held, not every object; encoded, at most as many as the queue keeps
    # snapshots of, and only those small enough for one
    changed: dict[ObjectRef, bytes] = {}
    missing, stale = set(), set()
    for ref, obj in sources(rule, endpoints):
        refs.add(ref)
        if ref not in made_from:
            if not filters.concerns(rule, obj):
                continue
            missing.add(ref)
        elif made_from[ref] != obj["metadata"].get("resourceVersion"):
            stale.add(ref)
        else:
            continue
        if (
            len(changed) < snapshots.MAX_SNAPSHOTS
            and len(encoded := snapshots.listed(obj)) < snapshots.MAX_SNAPSHOT_BYTES
        ):
            changed[ref] = encoded
    uncopied = _unattended(rule, endpoints, missing, held)
    keys = {ref: key_for(SYNC, rule, ref) for ref in stale | missing}
    wanted = {keys[ref]: ref for ref in keys if ref in stale or keys[ref] in uncopied}
    seen = {key: changed[ref] for key, ref in wanted.items() if ref in changed}
    gone = {key_for(SYNC, rule, ref) for ref in made_from.keys() - refs}
    return PollChanges(seen, uncopied, gone, wanted.keys() - seen.keys())


def status_keys(rule: SyncRule, endpoints: Endpoints) -> set[ObjectKey]:
    """Keys of source objects whose copy reports a status they do not show yet (the status poll): a
    digest of each copy's status is held, the source objects are listed a page at a time."""
    statuses = copy_views(
        rule,
        endpoints,
        lambda copy: digest(copy["status"]) if "status" in copy else None,
        metadata_only=False,
    )
    return {
        key_for(STATUS, rule, ref)
        for ref, obj in sources(rule, endpoints)
        if (status := statuses.get(ref)) is not None
        and filters.returns_status(rule, obj)
        and status != digest(obj.get("status"))
    }


def digest(value: Any) -> bytes:
    """A digest of a JSON value (its keys sorted): values with equal digests are equal."""
    return hashlib.blake2b(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


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
