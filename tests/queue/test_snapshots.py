"""Watch snapshots in the queue scripts: kept per sync key, newest wins, cleared by any later event
without one, handed out once by the claim, bounded (on fakeredis[lua] and on the real Redis)."""

from __future__ import annotations

from typing import Any

import pytest

from syncflow.kube import echoes, snapshots
from syncflow.kube.refs import ObjectRef
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Claim, Outcome, WorkQueue
from tests.queue.conftest import counted_add_each

KEY = ObjectKey("sync", "certs", "root:org:team", "default", "web")
RELATED = ObjectKey("related", "certs", "root:org:team", "default", "web")


def obj(rv: str, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": "web", "namespace": "default", "resourceVersion": rv, **extra}, "spec": {}}


def seen(service: QueueService, *keys: ObjectKey, source: dict[str, Any] | None) -> None:
    """A watch event of ``source`` (None: a deletion) adding ``keys``."""
    with snapshots.event_object("kcp", source):
        q(service).add_many(keys)


def q(service: QueueService) -> WorkQueue:
    return service.queues["sync"]


def delivered(service: QueueService, key: ObjectKey = KEY) -> snapshots.Snapshot | None:
    taken = q(service).take(key, "t")
    state, encoded = taken.claim, taken.snapshot
    assert state is Claim.CLAIMED
    with snapshots.delivered(encoded):
        snapshot = snapshots.current()
    q(service).done(key, "t", Outcome.OK)
    return snapshot


def test_the_claim_hands_out_the_newest_snapshot_once_without_managed_fields(service: QueueService) -> None:
    seen(service, KEY, RELATED, source=obj("1"))
    seen(service, KEY, source=obj("2", managedFields=[{"manager": "kubectl"}]))
    assert delivered(service) == snapshots.Snapshot("kcp", obj("2"))
    service.add(KEY)
    assert delivered(service) is None, "taken by the first claim"
    assert q(service).take(RELATED, "r").snapshot == "", "only sync and status keys keep one"


@pytest.mark.parametrize("later", ["deletion", "plain add"])
def test_a_later_event_without_an_object_clears_the_snapshot(service: QueueService, later: str) -> None:
    seen(service, KEY, source=obj("1"))
    if later == "deletion":
        seen(service, KEY, source=None)
    else:
        service.add(KEY)
    assert delivered(service) is None


def test_a_relist_or_resync_keeps_the_snapshot(service: QueueService) -> None:
    seen(service, KEY, source=obj("1"))
    service.add(KEY, bulk=True)  # e.g. a resync pass finding the copy missing: not a newer view
    assert delivered(service) == snapshots.Snapshot("kcp", obj("1"))


def test_snapshots_are_bounded_in_size_and_number(
    service: QueueService, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen(service, KEY, source=obj("1", annotations={"big": "x" * snapshots.MAX_SNAPSHOT_BYTES}))
    assert delivered(service) is None, "too large to keep"
    monkeypatch.setattr(snapshots, "MAX_SNAPSHOTS", 2)
    keys = [ObjectKey("sync", "certs", "c", "ns", f"o{i}") for i in range(4)]
    seen(service, *keys, source=obj("1"))
    assert [delivered(service, key) is not None for key in keys] == [True, True, False, False]


def test_an_event_while_the_key_runs_leaves_its_snapshot_for_the_next_run(service: QueueService) -> None:
    seen(service, KEY, source=obj("1"))
    taken = q(service).take(KEY, "t1")
    state, encoded = taken.claim, taken.snapshot
    seen(service, KEY, source=obj("2"))
    result = q(service).done(KEY, "t1", Outcome.OK)
    assert (state, result.state) == (Claim.CLAIMED, "requeued") and '"1"' in encoded
    assert delivered(service) == snapshots.Snapshot("kcp", obj("2"))


def test_echoes_that_came_while_the_key_ran_leave_no_snapshot_behind(service: QueueService) -> None:
    origin = echoes.Origin("kcp", ObjectRef("root:org:team", "default", "web"), "2")
    seen(service, KEY, source=obj("1"))
    q(service).take(KEY, "t1")
    with echoes.event_origin(origin.side, origin.ref, origin.resource_version):
        seen(service, KEY, source=obj("2"))  # the echo of the run's own write, before it reported
    assert q(service).done(KEY, "t1", Outcome.OK, own_writes=[origin]).state == "done"
    assert service.redis.hlen(q(service).layout.key("SN")) == 0


@pytest.mark.parametrize("stored", ["{not json", '{"side": "kcp"}', '["kcp"]', '{"side": "k", "object": 3}'])
def test_a_snapshot_that_cannot_be_read_counts_as_none(stored: str) -> None:
    with snapshots.delivered(stored):
        assert snapshots.current() is None


def test_a_poll_adds_each_object_with_its_own_snapshot_in_one_script_call(
    service: QueueService, sent: list[tuple[ObjectKey, str]]
) -> None:
    """``add_seen``: each key keeps the object listed for it (marked when listed without a copy), in
    one ``add_each`` call per ``ADD_BATCH`` keys, and every key gets its message."""
    keys = [ObjectKey("sync", "up", "root:org:team", "default", f"web-{i}") for i in range(3)]
    calls = counted_add_each(service)
    listed = {key: snapshots.listed(obj(str(i))) for i, key in enumerate(keys)}
    assert service.add_seen(listed, "pcluster", uncopied={keys[0]}) == 3
    assert calls == [1 + 5 * 3], "one call: per object its origin, version, snapshot, key count and key"
    assert sorted(key for key, _ in sent) == sorted(keys)
    assert delivered(service, keys[0]) == snapshots.Snapshot("pcluster", obj("0"), uncopied=True)
    assert delivered(service, keys[2]) == snapshots.Snapshot("pcluster", obj("2"))


def test_a_poll_clears_an_older_snapshot_it_cannot_keep(service: QueueService) -> None:
    """An object too large to keep leaves its key without a snapshot (the sync reads), not with an
    older event's."""
    seen(service, KEY, source=obj("1"))
    big = obj("2", annotations={"big": "x" * snapshots.MAX_SNAPSHOT_BYTES})
    service.add_seen({KEY: snapshots.listed(big)}, "kcp")
    assert delivered(service) is None


@pytest.mark.parametrize("uncopied", [False, True])
def test_a_listed_object_makes_the_snapshot_the_object_itself_makes(uncopied: bool) -> None:
    """``encoded_listed`` of ``listed`` is ``encoded``: byte for byte, managedFields left out."""
    listed = obj("3", annotations={"a": "ü"}) | {"data": {"k": "v"}}
    listed["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    snapshot = snapshots.Snapshot("pcluster", listed, uncopied)
    assert snapshots.encoded_listed(
        "pcluster", snapshots.listed(listed), uncopied=uncopied
    ) == snapshots.encoded(snapshot)
    with snapshots.delivered(snapshots.encoded(snapshot)):
        kept = snapshots.current()
    assert kept is not None and "managedFields" not in kept.obj["metadata"] and kept.uncopied == uncopied
