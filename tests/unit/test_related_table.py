"""Related objects (api-syncagent's ``spec.related``) case by case, against the in-memory API servers of
tests/support/fakeapi.py and a fakeredis related index: a primary is synced by ``sync_object`` (so its
copy and last-applied state are real), then its ``related`` key runs ``sync_related``, for each
direction (origin on the rule's source side, "kcp → service"; or on its target side, "service →
kcp"), each way of finding the objects (a reference in the primary, a template naming the copy
differently from its origin, a label selector with a rewrite), and each situation of the origin
object (missing, new, unchanged, changed, deleting, gone, the primary deleting with and without
``cleanup``, with and without ``syncStatus``).
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

import fakeredis
import pytest

from syncflow.queue.errors import RequeueAfter
from syncflow.queue.keys import ObjectKey
from syncflow.sync import metadata as md
from syncflow.sync.reconciler import Sync, sync_object
from syncflow.sync.related.index import EVERY, RelatedIndex, object_id
from syncflow.sync.related.reconcile import release_related, sync_related
from syncflow.sync.rule import (
    IdentityPlacement,
    Locator,
    Related,
    RelatedSelector,
    Resource,
    Rewrite,
    Side,
    SyncRule,
)
from tests.support.fakeapi import FakeApi, FakeEndpoints, Obj

THINGS = Resource(group="example.com", version="v1", kind="Thing", plural="things", namespaced=True)
CREDS = Resource(
    group="creds.example.com",
    version="v1",
    kind="Credential",
    plural="credentials",
    namespaced=True,
    status_subresource=True,
)
CLUSTER = "ws1"
STATE = "syncflow-state"
PRIMARY = "/apis/example.com/v1/namespaces/team/things/web"
SYNC_KEY = ObjectKey("sync", "things", CLUSTER, "team", "web")
RELATED_KEY = ObjectKey("related", "things", CLUSTER, "team", "web")
WRITES = ("POST", "PATCH", "PUT", "DELETE")

Origin = Literal["source", "target"]
LOCATORS: dict[str, Locator] = {
    "reference": Locator(reference="spec.credential"),
    "template": Locator(template="{{ .Side }}-{{ .Object.spec.credential }}"),
    "selector": Locator(
        selector=RelatedSelector(
            match_labels={"owner": "{{ .RemoteObject.metadata.name }}"},
            rewrite=Rewrite(template="{{ .Value }}-copy"),
        )
    ),
}


def names(origin: Origin, locator: str) -> tuple[str, str]:
    """(origin name, copy name) of the related object ``creds`` each locator finds."""
    if locator == "template":
        destination: Origin = "target" if origin == "source" else "source"
        return f"{origin}-creds", f"{destination}-creds"
    if locator == "selector":
        return "creds", "creds-copy"
    return "creds", "creds"


def creds_path(name: str) -> str:
    return CREDS.path("team", name)


@dataclass
class World:
    """Both sides, the rule, and the related index of one case."""

    ends: FakeEndpoints
    rule: SyncRule
    index: RelatedIndex
    origin: Origin
    locator: str

    @property
    def origin_api(self) -> FakeApi:
        return self.ends.source if self.origin == "source" else self.ends.target

    @property
    def destination_api(self) -> FakeApi:
        return self.ends.target if self.origin == "source" else self.ends.source

    @property
    def origin_path(self) -> str:
        return creds_path(names(self.origin, self.locator)[0])

    @property
    def copy_path(self) -> str:
        return creds_path(names(self.origin, self.locator)[1])

    def sync(self) -> None:
        """The primary's ``sync`` key, to the end (deletions requeue until their copies are gone)."""
        s = Sync(self.rule, self.ends, release_related=functools.partial(release_related, self.index))  # type: ignore[arg-type]
        for _ in range(5):
            try:
                sync_object(s, SYNC_KEY)
            except RequeueAfter:
                continue
            return
        pytest.fail("the sync still waits after five runs")

    def related(self) -> Counter[str]:
        """One run of the primary's ``related`` key; the writes it made."""
        self.ends.clear_calls()
        sync_related(Sync(self.rule, self.ends), RELATED_KEY, self.index)  # type: ignore[arg-type]
        return Counter({m: n for m, n in self.ends.calls.items() if m in WRITES})

    def put_origin(self, data: str, status: Obj | None = None, **meta: Any) -> None:
        name = names(self.origin, self.locator)[0]
        obj: Obj = {
            "apiVersion": "creds.example.com/v1",
            "kind": "Credential",
            "metadata": {"name": name, "namespace": "team", "labels": {"owner": "web"}, **meta},
            "spec": {"data": data},
        }
        if status is not None:
            obj["status"] = status
        existing = self.origin_api.objects.get(self.origin_path)
        if existing is not None:  # an update keeps what the server keeps (uid, finalizers)
            kept = {k: existing["metadata"][k] for k in ("uid", "finalizers") if k in existing["metadata"]}
            obj["metadata"] = {**kept, **obj["metadata"]}
        self.origin_api.put(self.origin_path, obj)

    def copy(self) -> Obj | None:
        return self.destination_api.objects.get(self.copy_path)

    def origin_finalizers(self) -> list[str]:
        obj = self.origin_api.objects.get(self.origin_path)
        return list((obj or {}).get("metadata", {}).get("finalizers") or [])


def world(origin: Origin, locator: str, cleanup: bool = False, sync_status: bool = False) -> World:
    related = Related(
        identifier="credentials",
        origin=origin,
        origin_resource=CREDS,
        destination_resource=CREDS,
        object=LOCATORS[locator],
        cleanup=cleanup,
        sync_status=sync_status,
    )
    rule = SyncRule(
        name="things",
        agent="table",
        source=Side(endpoint="source", resource=THINGS, cluster=CLUSTER),
        target=Side(endpoint="target", resource=THINGS),
        placement=IdentityPlacement(),
        finalizer=md.CLEANUP_FINALIZER,
        state_namespace=STATE,
        related=(related,),
    )
    ends = FakeEndpoints()
    for api in (ends.source, ends.target):
        api.put("/api/v1/namespaces/team", {"metadata": {"name": "team"}})
    made = World(ends, rule, RelatedIndex(fakeredis.FakeRedis(), "table"), origin, locator)
    primary = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "web", "namespace": "team"},
        "spec": {"credential": "creds"},
    }
    ends.source.put(PRIMARY, primary)
    made.sync()
    assert PRIMARY in ends.target.objects, "the primary's copy exists before its related objects sync"
    # an object of the same resource beside it that the locators do not name or select
    stranger = {"metadata": {"name": "stranger", "namespace": "team", "labels": {"owner": "other"}}}
    made.origin_api.put(creds_path("stranger"), {**stranger, "spec": {"data": "no"}})
    return made


DIRECTIONS: list[Origin] = ["source", "target"]
CASES = list(itertools.product(DIRECTIONS, LOCATORS, (False, True), (False, True)))
IDS = [
    f"{'kcp-to-service' if o == 'source' else 'service-to-kcp'}|{loc}|cleanup={c}|status={st}"
    for o, loc, c, st in CASES
]
table = pytest.mark.parametrize(("origin", "locator", "cleanup", "sync_status"), CASES, ids=IDS)


@table
def test_a_missing_origin_object_makes_no_copy_but_is_watched_for(
    origin: Origin, locator: str, cleanup: bool, sync_status: bool
) -> None:
    w = world(origin, locator, cleanup, sync_status)
    named = locator != "selector"
    announced = origin == "target" and named  # the kcp primary names the copy once it is resolved
    assert w.related() == (Counter(PATCH=1) if announced else Counter()), "nothing copied"
    assert w.copy() is None
    annotations = w.ends.source.objects[PRIMARY]["metadata"].get("annotations") or {}
    assert (f"{md.RELATED_RESOURCES_ANNOTATION_PREFIX}credentials.0" in annotations) == announced
    origin_name, copy_name = names(origin, locator)
    destination = "target" if origin == "source" else "source"
    origin_cluster = CLUSTER if origin == "source" else ""
    if locator == "selector":  # any new object in the namespace may match: the namespace is recorded
        watched = object_id(origin, CREDS, origin_cluster, "team", EVERY)
    else:  # a reference or a template names the object before it exists
        watched = object_id(origin, CREDS, origin_cluster, "team", origin_name)
        copy_cluster = CLUSTER if destination == "source" else ""
        assert w.index.lookup([object_id(destination, CREDS, copy_cluster, "team", copy_name)]) == {
            RELATED_KEY
        }
    assert w.index.lookup([watched]) == {RELATED_KEY}


@table
def test_a_new_origin_object_is_copied_under_its_destination_name(
    origin: Origin, locator: str, cleanup: bool, sync_status: bool
) -> None:
    w = world(origin, locator, cleanup, sync_status)
    w.put_origin("v1", status={"phase": "Issued"})
    writes = w.related()
    copy = w.copy()
    assert copy is not None and copy["spec"] == {"data": "v1"}
    assert copy["metadata"]["name"] == names(origin, locator)[1]
    assert md.AGENT_LABEL not in (copy["metadata"].get("labels") or {}), (
        "related copies carry no sync metadata"
    )
    assert copy.get("status") == ({"phase": "Issued"} if sync_status else None)
    assert creds_path("stranger") not in w.destination_api.objects and creds_path("stranger-copy") not in (
        w.destination_api.objects
    )
    # the origin object on the rule's source side holds the rule's finalizer until its copy is gone
    assert w.origin_finalizers() == ([md.CLEANUP_FINALIZER] if origin == "source" else [])
    annotations = w.ends.source.objects[PRIMARY]["metadata"].get("annotations") or {}
    annotation = f"{md.RELATED_RESOURCES_ANNOTATION_PREFIX}credentials.0"
    if origin == "target":  # the kcp primary names its copies, as api-syncagent's annotation does
        assert f'"name":"{names(origin, locator)[1]}"' in annotations[annotation]
    else:
        assert annotation not in annotations
    assert writes["POST"] == 1, "one create"
    state = w.ends.target.objects[f"/api/v1/namespaces/{STATE}/secrets/" + _state_name(w)]
    assert len(state["data"]) == 2, "the primary's state Secret records the related object's last state too"


def _state_name(w: World) -> str:
    return next(
        p.rsplit("/", 1)[1] for p in w.ends.target.objects if p.startswith(f"/api/v1/namespaces/{STATE}/")
    )


@table
def test_an_unchanged_origin_object_writes_nothing(
    origin: Origin, locator: str, cleanup: bool, sync_status: bool
) -> None:
    w = world(origin, locator, cleanup, sync_status)
    w.put_origin("v1", status={"phase": "Issued"})
    w.related()
    copy = w.copy()
    assert w.related() == Counter(), "a second run reads and writes nothing"
    assert w.copy() == copy


@table
def test_a_changed_origin_object_is_patched_into_its_copy(
    origin: Origin, locator: str, cleanup: bool, sync_status: bool
) -> None:
    w = world(origin, locator, cleanup, sync_status)
    w.put_origin("v1", status={"phase": "Issued"})
    w.related()
    uid = (w.copy() or {})["metadata"]["uid"]
    w.put_origin("v2", status={"phase": "Renewed"})
    writes = w.related()
    copy = w.copy()
    assert copy is not None and copy["spec"] == {"data": "v2"}
    assert copy["metadata"]["uid"] == uid, "patched, not made again"
    assert copy.get("status") == ({"phase": "Renewed"} if sync_status else None)
    assert writes["POST"] == 0 and writes["DELETE"] == 0
    assert writes == Counter(PATCH=1, PUT=1 + sync_status), "the copy, its state (and its status)"


@table
def test_a_deleting_origin_object_takes_its_copy_only_when_it_holds_the_finalizer(
    origin: Origin, locator: str, cleanup: bool, sync_status: bool
) -> None:
    w = world(origin, locator, cleanup, sync_status)
    w.put_origin("v1")
    w.related()
    w.put_origin("v1", deletionTimestamp="2026-01-01T00:00:00Z")
    w.related()
    if origin == "source":  # the copy goes first, then the origin object is released
        assert w.copy() is None
        assert w.origin_finalizers() == [md.CLEANUP_FINALIZER]
        w.related()
        assert w.origin_finalizers() == []
    else:  # nothing holds a service-side object: its deletion is not waited for, the copy stays
        assert w.copy() is not None


@table
def test_an_origin_object_gone_leaves_its_copy(
    origin: Origin, locator: str, cleanup: bool, sync_status: bool
) -> None:
    w = world(origin, locator, cleanup, sync_status)
    w.put_origin("v1")
    w.related()
    del w.origin_api.objects[w.origin_path]
    # no longer selected, or named but missing: nothing tells a deletion from "not made yet"
    assert w.related() == Counter(PUT=0)
    assert w.copy() is not None


@table
def test_a_deleted_primary_takes_the_copies_that_clean_up(
    origin: Origin, locator: str, cleanup: bool, sync_status: bool
) -> None:
    w = world(origin, locator, cleanup, sync_status)
    w.put_origin("v1")
    w.related()
    primary = w.ends.source.objects[PRIMARY]
    primary["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    w.ends.source.put(PRIMARY, primary)
    w.sync()
    cleans_up = cleanup or origin == "source"
    assert (w.copy() is None) == cleans_up, "removed when the resource cleans up or comes from kcp"
    assert w.origin_api.objects.get(w.origin_path) is not None, "the origin object itself is never deleted"
    assert w.origin_finalizers() == [], "and released"
    assert PRIMARY not in w.ends.target.objects, "then the primary's copy goes"
    assert md.CLEANUP_FINALIZER not in (w.ends.source.objects[PRIMARY]["metadata"].get("finalizers") or [])
    origin_cluster = CLUSTER if origin == "source" else ""
    assert (
        w.index.lookup([object_id(origin, CREDS, origin_cluster, "team", names(origin, locator)[0])]) == set()
    )


@pytest.mark.parametrize("origin", DIRECTIONS)
@pytest.mark.parametrize("locator", LOCATORS)
def test_a_related_run_waits_for_the_primarys_copy(origin: Origin, locator: str) -> None:
    w = world(origin, locator)
    del w.ends.target.objects[PRIMARY]
    with pytest.raises(Exception, match="does not exist yet"):
        w.related()


@pytest.mark.parametrize("origin", DIRECTIONS)
@pytest.mark.parametrize("locator", LOCATORS)
def test_a_gone_primary_forgets_what_it_recorded(origin: Origin, locator: str) -> None:
    w = world(origin, locator)
    w.put_origin("v1")
    w.related()
    del w.ends.source.objects[PRIMARY]
    assert w.related() == Counter()
    origin_cluster = CLUSTER if origin == "source" else ""
    assert (
        w.index.lookup([object_id(origin, CREDS, origin_cluster, "team", names(origin, locator)[0])]) == set()
    )
