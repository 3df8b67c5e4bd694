"""Status return (a copy's status → its source object's ``/status``) case by case, against the in-memory
API servers of tests/support/fakeapi.py: for every source state, copy state, rule and way the run is
started, which requests one ``return_status`` run makes and what the source's status is after it.

The run either reads both sides (a resync, a sync's status step, a key with no snapshot) or takes the
copy from the target watch event that queued it (``syncflow.kube.snapshots``): the watch queues such a
run only when the copy's status changed, so that path writes what the event carried without reading
the source. The table's oracle (``expected``) says the rules in a few lines; each case checks one
situation against it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from syncflow.kube import snapshots
from syncflow.queue.keys import ObjectKey
from syncflow.sync.desired import remote_annotations, remote_labels
from syncflow.sync.reconciler import Sync, may_return_status, return_status
from syncflow.sync.rule import Mutate, Resource, Selector, Side, SyncRule
from tests.support.fakeapi import FakeEndpoints, Obj

THINGS = Resource(
    group="example.com", version="v1", kind="Thing", plural="things", namespaced=True, status_subresource=True
)
CLUSTER = "ws1"
PATH = "/apis/example.com/v1/namespaces/team/things/web"
KEY = ObjectKey("sync", "things", CLUSTER, "team", "web")

READY: Obj = {"phase": "Ready"}
PENDING: Obj = {"phase": "Pending", "secret": "s3cr3t"}
STATUSES: dict[str, Obj | None] = {"none": None, "ready": READY, "pending": PENDING}
HIDE_SECRET = Mutate(status=({"delete": {"path": "status.secret"}},))

RULES: dict[str, dict[str, Any]] = {
    "return": {},
    "return-without-subresource": {"source_subresource": False},
    "none": {"status": "none"},
    "carry": {"status": "carry"},
    "status-for-this-object": {"status_for": Selector(names=("web",))},
    "status-for-other-objects": {"status_for": Selector(names=("other",))},
    "status-mutation": {"transforms": (HIDE_SECRET,)},
}
SOURCES = ["gone"] + [f"{state}/{status}" for state in ("live", "deleting") for status in STATUSES]
COPIES = ["gone", "foreign/pending"] + [f"ours/{status}" for status in STATUSES]
RUNS = ["read", "event"]


def make_rule(kind: str) -> SyncRule:
    options = dict(RULES[kind])
    resource = (
        THINGS
        if options.pop("source_subresource", True)
        else THINGS.model_copy(update={"status_subresource": False})
    )
    return SyncRule(
        name="things",
        agent="table",
        source=Side(endpoint="source", resource=resource, cluster=CLUSTER),
        target=Side(endpoint="target", resource=THINGS),
        **options,
    )


def thing(status: Obj | None, **meta: Any) -> Obj:
    obj: Obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "web", "namespace": "team", **meta},
        "spec": {"size": 1},
    }
    if status is not None:
        obj["status"] = dict(status)
    return obj


def source_object(state: str) -> Obj | None:
    if state == "gone":
        return None
    life, status = state.split("/")
    if life == "deleting":
        return thing(STATUSES[status], deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["f"])
    return thing(STATUSES[status])


def copy_object(state: str) -> Obj | None:
    if state == "gone":
        return None
    owner, status = state.split("/")
    if owner == "foreign":
        return thing(STATUSES[status], labels={"app": "web"})
    return thing(
        STATUSES[status],
        labels=remote_labels(CLUSTER, "team", "web", "table"),
        annotations=remote_annotations("team", "web", None),
    )


@dataclass(frozen=True)
class Outcome:
    """What a run costs on each side, and the source's status after it."""

    source_calls: Counter[str]
    target_calls: Counter[str]
    status: Obj | None


def expected(rule: str, source: str, copy: str, run: str) -> Outcome:
    """The oracle: the rules of status return, as docs/architecture.md and the reconciler state them."""
    obj, made = source_object(source), copy_object(copy)
    before = None if obj is None else obj.get("status")
    if rule in ("return-without-subresource", "none", "carry"):
        return Outcome(Counter(), Counter(), before)  # nothing to return: not a single request
    delivered = run == "event" and copy.startswith("ours/") and rule == "return"
    if delivered:  # the event's copy is trusted: its status (if any) is written, the source is not read
        assert made is not None
        if "status" not in made:
            return Outcome(Counter(), Counter(), before)
        written = made["status"] if obj is not None else None
        return Outcome(Counter(PATCH=1), Counter(), written)
    if obj is None or source.startswith("deleting/") or rule == "status-for-other-objects":
        return Outcome(Counter(GET=1), Counter(), before)  # read the source, and stop there
    if made is None or not copy.startswith("ours/"):
        return Outcome(Counter(GET=1), Counter(GET=1), before)  # no copy of ours where it belongs
    status = made.get("status")
    if status is not None and rule == "status-mutation":
        status = {k: v for k, v in status.items() if k != "secret"}
    if status is None or status == before:
        return Outcome(Counter(GET=1), Counter(GET=1), before)
    return Outcome(Counter(GET=1, PUT=1), Counter(GET=1), status)


CASES = list(itertools.product(RULES, SOURCES, COPIES, RUNS))


@pytest.mark.parametrize(("rule", "source", "copy", "run"), CASES, ids=["|".join(c) for c in CASES])
def test_status_return(rule: str, source: str, copy: str, run: str) -> None:
    ends = FakeEndpoints()
    obj, made = source_object(source), copy_object(copy)
    if obj is not None:
        ends.source.put(PATH, obj)
    if made is not None:
        made = ends.target.put(PATH, made)
    copy_before = dict(ends.target.objects.get(PATH) or {})
    encoded = ""
    if run == "event" and made is not None:  # the copy as the target watch delivered it
        encoded = orjson.dumps({"side": "target", "object": made}).decode()
    want = expected(rule, source, copy, run)

    with snapshots.delivered(encoded):
        return_status(Sync(make_rule(rule), ends), KEY)  # type: ignore[arg-type]

    assert (ends.source.calls, ends.target.calls) == (want.source_calls, want.target_calls)
    after = ends.source.objects.get(PATH)
    assert (after is None) == (obj is None), "a status run never creates or deletes a source object"
    assert (None if after is None else after.get("status")) == want.status
    assert ends.target.objects.get(PATH, {}) == copy_before, "a status run never writes the copy"


def test_a_changed_status_is_written_once_then_nothing_until_it_changes_again() -> None:
    ends = FakeEndpoints()
    ends.source.put(PATH, thing(None))
    ends.target.put(PATH, copy_object("ours/ready") or {})
    sync = Sync(make_rule("return"), ends)  # type: ignore[arg-type]
    writes = []
    for status in (READY, READY, PENDING, PENDING, READY):
        ends.target.objects[PATH]["status"] = dict(status)
        ends.clear_calls()
        return_status(sync, KEY)
        writes.append(ends.source.calls["PUT"])
        assert ends.source.objects[PATH]["status"] == status
    assert writes == [1, 0, 1, 0, 1]


@pytest.mark.parametrize(
    ("rule", "copy", "may"),
    [
        ("return", "ours/ready", True),
        ("return", "ours/none", False),  # e.g. the echo of our own create: no status run is queued
        ("status-mutation", "ours/none", True),  # a status mutation may give it one
        ("return-without-subresource", "ours/ready", False),
        ("none", "ours/ready", False),
        ("carry", "ours/ready", False),
    ],
)
def test_which_copy_events_may_have_a_status_to_return(rule: str, copy: str, may: bool) -> None:
    made = copy_object(copy)
    assert made is not None
    assert may_return_status(make_rule(rule), made) is may
