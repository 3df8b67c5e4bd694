"""The reconciler against in-memory API servers, case by case (as api-syncagent tests its syncer with
a fake client): what one ``sync_object`` or ``return_status`` run writes for a given source, copy and
state. The live stacks of tests/publish, tests/workload, tests/edge and tests/conformance cover the
same engine end to end; these cases say exactly which requests each situation costs."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from syncflow.queue.errors import PermanentError, RequeueAfter
from syncflow.queue.keys import ObjectKey
from syncflow.sync import metadata as md
from syncflow.sync.desired import remote_labels
from syncflow.sync.reconciler import ORPHANED_ANNOTATION, Sync, return_status, sync_object
from syncflow.sync.rule import IdentityPlacement, Resource, Side, SyncRule
from tests.support.fakeapi import FakeEndpoints, Obj

THINGS = Resource(group="example.com", version="v1", kind="Thing", plural="things", namespaced=True)
CLUSTER = "ws1"
FINALIZER = "syncflow.kcp.io/table"


def rule(**changes: Any) -> SyncRule:
    return SyncRule(
        name="things",
        agent="table",
        source=Side(endpoint="source", resource=THINGS, cluster=CLUSTER),
        target=Side(endpoint="target", resource=THINGS),
        placement=IdentityPlacement(),
        finalizer=FINALIZER,
        **changes,
    )


SOURCE = "/apis/example.com/v1/namespaces/team/things/web"
KEY = ObjectKey("sync", "things", CLUSTER, "team", "web")


def thing(size: int, **meta: Any) -> Obj:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "web", "namespace": "team", **meta},
        "spec": {"size": size},
    }


def our_copy(size: int, **status: Any) -> Obj:
    labels = remote_labels(CLUSTER, "team", "web", "table")
    return {**thing(size, labels=labels), **({"status": status} if status else {})}


@pytest.fixture
def ends() -> FakeEndpoints:
    made = FakeEndpoints()
    made.target.put("/api/v1/namespaces/team", {"metadata": {"name": "team"}})
    return made


def run(ends: FakeEndpoints, **changes: Any) -> Counter[str]:
    """One sync of KEY; the requests it made, on both sides."""
    ends.source.calls.clear()
    ends.target.calls.clear()
    sync_object(Sync(rule(**changes), ends), KEY)  # type: ignore[arg-type]
    return ends.source.calls + ends.target.calls


def test_a_new_source_gets_its_finalizer_and_one_copy(ends: FakeEndpoints) -> None:
    ends.source.put(SOURCE, thing(1))
    assert run(ends) == Counter({"GET": 2, "PATCH": 1, "POST": 1}), "read, finalizer, look, create"
    assert ends.source.objects[SOURCE]["metadata"]["finalizers"] == [FINALIZER]
    made = ends.target.objects[SOURCE]
    assert made["spec"] == {"size": 1} and made["metadata"]["labels"][md.AGENT_LABEL] == "table"


def test_an_unchanged_source_writes_nothing(ends: FakeEndpoints) -> None:
    ends.source.put(SOURCE, thing(1))
    run(ends)
    assert run(ends) == Counter({"GET": 2}), "the source and its copy are read; nothing is written"


def test_a_changed_spec_is_patched_into_the_copy(ends: FakeEndpoints) -> None:
    ends.source.put(SOURCE, thing(1))
    run(ends)
    ends.source.put(SOURCE, {**ends.source.objects[SOURCE], "spec": {"size": 3}})
    assert run(ends) == Counter({"GET": 2, "PATCH": 1})
    assert ends.target.objects[SOURCE]["spec"] == {"size": 3}


def test_a_foreign_object_in_the_way_is_refused_and_left_alone(ends: FakeEndpoints) -> None:
    ends.source.put(SOURCE, thing(1))
    foreign = ends.target.put(SOURCE, thing(9))
    with pytest.raises(PermanentError):
        run(ends)
    assert ends.target.objects[SOURCE] == foreign, "never updated"


def test_a_foreign_object_is_left_alone_without_a_park_when_the_rule_never_adopts(
    ends: FakeEndpoints,
) -> None:
    ends.source.put(SOURCE, thing(1))
    foreign = ends.target.put(SOURCE, thing(9))
    run(ends, adopt="never")
    assert ends.target.objects[SOURCE] == foreign


def test_a_deleted_source_loses_its_copy_then_its_finalizer(ends: FakeEndpoints) -> None:
    ends.source.put(SOURCE, thing(1))
    run(ends)
    deleting = {**ends.source.objects[SOURCE]}
    deleting["metadata"] = {**deleting["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}
    ends.source.put(SOURCE, deleting)
    with pytest.raises(RequeueAfter):  # it waits for the copy's deletion
        run(ends)
    assert SOURCE not in ends.target.objects, "the copy goes first"
    run(ends)
    assert ends.source.objects[SOURCE]["metadata"].get("finalizers") in (None, []), "then the finalizer"


def test_a_source_gone_takes_its_copy_and_orphan_keeps_it(ends: FakeEndpoints) -> None:
    ends.source.put(SOURCE, thing(1))
    run(ends)
    del ends.source.objects[SOURCE]
    run(ends, deletion="orphan")
    kept = ends.target.objects[SOURCE]
    assert kept["metadata"]["annotations"][ORPHANED_ANNOTATION] == "true", "orphaned: kept, and marked so"
    ends.source.put(SOURCE, thing(1))
    ends.target.objects.clear()
    ends.target.put("/api/v1/namespaces/team", {"metadata": {"name": "team"}})
    run(ends)
    del ends.source.objects[SOURCE]
    run(ends)
    assert SOURCE not in ends.target.objects


def test_a_copys_status_returns_only_when_it_differs(ends: FakeEndpoints) -> None:
    ends.source.put(SOURCE, thing(1))
    run(ends)
    ends.target.put(SOURCE, {**ends.target.objects[SOURCE], "status": {"ready": True}})
    status_things = THINGS.model_copy(update={"status_subresource": True})
    sync = Sync(
        rule().model_copy(
            update={"source": Side(endpoint="source", resource=status_things, cluster=CLUSTER)}
        ),
        ends,
    )  # type: ignore[arg-type]
    ends.source.calls.clear()
    return_status(sync, KEY)
    assert ends.source.objects[SOURCE]["status"] == {"ready": True}
    assert ends.source.calls == Counter({"GET": 1, "PUT": 1}), "read it, then write the status"
    ends.source.calls.clear()
    return_status(sync, KEY)
    assert ends.source.calls == Counter({"GET": 1}), "the same status is not written again"
