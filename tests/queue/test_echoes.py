"""Echoes of our own writes in the queue scripts: dropped at add, or resolved at done when they came
while the key was leased (on fakeredis[lua] and on the real Redis, see the fixture)."""

from __future__ import annotations

from syncflow.kube import echoes
from syncflow.kube.refs import ObjectRef
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import ADD_BATCH, Claim, EventAdd, Outcome, WorkQueue
from tests.queue.conftest import Sent, counted_add_each

KEY = ObjectKey("sync", "certs", "root:org:team", "default", "web")
STATUS_KEY = ObjectKey("status", "certs", "root:org:team", "default", "web")
SOURCE = ObjectRef("root:org:team", "default", "web")
COPY = ObjectRef("", "team-ns", "web")


def written(ref: ObjectRef, rv: str, side: str = "kcp") -> echoes.Origin:
    return echoes.Origin(side, ref, rv)


def event(service: QueueService, key: ObjectKey, origin: echoes.Origin) -> bool:
    """A watch event of ``origin`` adding ``key``; True if a message went out."""
    with echoes.event_origin(origin.side, origin.ref, origin.resource_version):
        return service.add(key)


def q(service: QueueService, name: str = "sync") -> WorkQueue:
    return service.queues[name]


def test_the_echo_of_a_stored_own_write_adds_nothing_on_any_queue(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    q(service).claim(KEY, "t1")
    q(service).done(KEY, "t1", Outcome.OK, own_writes=[written(SOURCE, "11"), written(COPY, "5", "local")])
    sent.clear()

    assert event(service, KEY, written(SOURCE, "11")) is False
    assert event(service, STATUS_KEY, written(COPY, "5", "local")) is False, "echoes land on any queue"
    assert q(service).stats().dirty == 0 and q(service, "status").stats().dirty == 0
    assert q(service).counters()["echoes"] == 1 and q(service, "status").counters()["echoes"] == 1
    assert sent == []


def test_a_later_change_or_another_side_is_new_work(service: QueueService, sent: Sent) -> None:
    service.add(KEY)
    q(service).claim(KEY, "t1")
    q(service).done(KEY, "t1", Outcome.OK, own_writes=[written(SOURCE, "11")])
    assert event(service, KEY, written(SOURCE, "12")) is True, "someone changed it after our write"
    q(service).claim(KEY, "t2")
    q(service).done(KEY, "t2", Outcome.OK)
    assert event(service, KEY, written(SOURCE, "11", side="local")) is True, "same ref, other endpoint"


def test_an_echo_that_arrives_while_the_key_is_leased_does_not_requeue_it(service: QueueService) -> None:
    service.add(KEY)
    assert q(service).claim(KEY, "t1") is Claim.CLAIMED
    # the handler wrote the finalizer (rv 11); its echo arrives before the run reports done
    assert event(service, KEY, written(SOURCE, "11")) is False
    assert q(service).stats().dirty == 1
    result = q(service).done(KEY, "t1", Outcome.OK, own_writes=[written(SOURCE, "11")])
    assert result.state == "done"
    assert q(service).stats().dirty == 0 and q(service).stats().pending == 0


def test_every_write_of_one_object_in_one_run_is_recognised(service: QueueService) -> None:
    service.add(KEY)
    q(service).claim(KEY, "t1")
    # the run wrote the finalizer (rv 11), then the status (rv 12); both echoes come while leased
    event(service, KEY, written(SOURCE, "11"))
    event(service, KEY, written(SOURCE, "12"))
    writes = [written(SOURCE, "11"), written(SOURCE, "12")]
    assert q(service).done(KEY, "t1", Outcome.OK, own_writes=writes).state == "done"
    # and an echo that comes only after done is dropped too, whichever of the two writes it is
    assert event(service, KEY, written(SOURCE, "11")) is False
    assert event(service, KEY, written(SOURCE, "12")) is False
    assert event(service, KEY, written(SOURCE, "13")) is True, "a later change is new work"


def test_an_object_keeps_only_its_last_few_own_writes(service: QueueService) -> None:
    for run, version in enumerate(range(10, 16)):
        service.add(KEY)
        q(service).claim(KEY, f"t{run}")
        q(service).done(KEY, f"t{run}", Outcome.OK, own_writes=[written(SOURCE, str(version))])
    stored = service.redis.hget(q(service).layout.key("own"), written(SOURCE, "15").token)
    assert stored is not None and stored.split() == [b"12", b"13", b"14", b"15"]
    assert event(service, KEY, written(SOURCE, "11")) is True, "past the last four: no longer known"


def test_a_real_change_while_leased_still_requeues_among_echoes(service: QueueService) -> None:
    service.add(KEY)
    q(service).claim(KEY, "t1")
    event(service, KEY, written(SOURCE, "11"))  # our echo
    event(service, KEY, written(SOURCE, "12"))  # the user's edit after it
    result = q(service).done(KEY, "t1", Outcome.OK, own_writes=[written(SOURCE, "11")])
    assert result.state == "requeued"


def test_an_add_without_origin_while_leased_always_requeues(service: QueueService) -> None:
    service.add(KEY)
    q(service).claim(KEY, "t1")
    event(service, KEY, written(SOURCE, "11"))
    service.add(KEY, bulk=True)  # a relist: it may have missed anything
    result = q(service).done(KEY, "t1", Outcome.OK, own_writes=[written(SOURCE, "11")])
    assert result.state == "requeued"


def test_a_failed_run_keeps_its_echoes_out_too(service: QueueService) -> None:
    service.add(KEY)
    q(service).claim(KEY, "t1")
    event(service, KEY, written(SOURCE, "11"))
    result = q(service).done(KEY, "t1", Outcome.TRANSIENT, error="{}", own_writes=[written(SOURCE, "11")])
    assert result.state == "backoff", "the backoff stands: the echo is not an event that skips it"


def test_stored_own_writes_are_capped_and_expire(service: QueueService) -> None:
    queue = q(service)
    queue._echo_limits = [60_000, 3]
    service.add(KEY)
    queue.claim(KEY, "t1")
    writes = [written(ObjectRef("", "ns", f"o{i}"), "1") for i in range(5)]
    queue.done(KEY, "t1", Outcome.OK, own_writes=writes)
    own = queue.layout.key("own")
    assert service.redis.hlen(own) == 3 and service.redis.zcard(queue.layout.key("own-expiry")) == 3

    queue._echo_limits = [0, 3]  # these expire at once: the same call prunes them, the others stay
    service.add(KEY)
    queue.claim(KEY, "t2")
    queue.done(KEY, "t2", Outcome.OK, own_writes=[written(SOURCE, "11")])
    assert service.redis.hlen(own) == 3 and service.redis.hget(own, written(SOURCE, "11").token) is None


def test_only_a_tasks_collected_writes_are_recorded() -> None:
    echoes.record("kcp", SOURCE, "1")  # outside a task: nothing to record into, no error
    with echoes.collect() as writes:
        echoes.record("kcp", SOURCE, "2")
        echoes.record("kcp", SOURCE, "")  # a write without a version cannot be matched
        for i in range(echoes.MAX_WRITES_PER_TASK + 5):
            echoes.record("local", ObjectRef("", "ns", f"o{i}"), "3")
    assert writes[0] == written(SOURCE, "2")
    assert len(writes) == echoes.MAX_WRITES_PER_TASK


def test_the_events_of_a_read_are_added_in_one_call_each_as_on_its_own(
    service: QueueService, sent: Sent
) -> None:
    """``add_events`` (a watch's read): one script call for all its events, and each event adds as it
    would alone: the echo of an own write adds nothing, the others mark their keys, on every queue."""
    service.add(KEY)
    q(service).claim(KEY, "t1")
    q(service).done(KEY, "t1", Outcome.OK, own_writes=[written(SOURCE, "11")])
    sent.clear()
    other = ObjectKey("sync", "certs", "root:org:team", "default", "db")
    calls = counted_add_each(service)
    events = [
        EventAdd((KEY, STATUS_KEY), written(SOURCE, "11")),  # an echo: neither key is new work
        EventAdd((other,), written(ObjectRef("root:org:team", "default", "db"), "12")),
        EventAdd((KEY,), written(SOURCE, "13")),  # a later change of the same object
    ]
    assert service.add_events(events) == 2
    assert len(calls) == 1, "the sync queue's keys of the three events in one call"
    assert sorted(key for key, _ in sent) == sorted([KEY, other])
    assert q(service, "status").stats().dirty == 0, "the echo's status key stays clean"
    assert q(service).counters()["echoes"] == 1
    assert q(service, "status").counters()["echoes"] == 1


def test_an_event_of_more_keys_than_one_call_takes_is_split(service: QueueService, sent: Sent) -> None:
    """No script call adds more than ``ADD_BATCH`` keys, however many one event maps to (a related
    object many rules reference), so one event never holds Redis up for long."""
    many = [ObjectKey("sync", "certs", "root:org:team", "default", f"obj-{i}") for i in range(ADD_BATCH + 5)]
    calls = counted_add_each(service)
    assert service.add_events([EventAdd(tuple(many))]) == len(many)
    assert calls == [1 + 4 + ADD_BATCH, 1 + 4 + 5], (
        "the most snapshots, then origin, version, snapshot, count"
    )
    assert sorted(key for key, _ in sent) == sorted(many)
