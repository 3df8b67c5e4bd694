"""The list+watch loop against a real devcluster: pagination, resume, 410 Gone, cuts and stalls."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest
from kubernetes import client

from syncflow.kube import deferred, echoes
from syncflow.kube import watch as watch_module
from syncflow.kube.bookmarks import MemoryBookmarks
from syncflow.kube.clients import for_url
from syncflow.kube.refs import ObjectRef
from syncflow.kube.watch import ResourceWatch
from syncflow.sync import watches as watches_module
from syncflow.sync.watches import WatchSet
from tests.kube.conftest import WATCH_HISTORY, Recorder, Runner, close_client, configmap
from tests.support.devcluster import DevclusterProcess
from tests.support.proxy import tcp_proxy
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

T = (5, 10)


def watch_of(
    api: client.ApiClient,
    namespace: str,
    recorder: Recorder,
    bookmarks: MemoryBookmarks,
    *,
    page_size: int = 500,
    inactivity_timeout: float = 70.0,
    connect_timeout: float = 10.0,
) -> ResourceWatch:
    """A ConfigMap watch of one namespace."""
    return ResourceWatch(
        api,
        f"/api/v1/namespaces/{namespace}/configmaps",
        f"cm-{namespace}",
        recorder,
        bookmarks,
        page_size=page_size,
        inactivity_timeout=inactivity_timeout,
        connect_timeout=connect_timeout,
    )


def refs(namespace: str, *names: str) -> set[ObjectRef]:
    """Refs of ConfigMaps in ``namespace``, with the ``kube-root-ca.crt`` every namespace has."""
    return {ObjectRef("", namespace, name) for name in (*names, "kube-root-ca.crt")}


def test_lists_all_pages_then_watches_and_resumes_from_its_bookmark(
    api: client.ApiClient, core: client.CoreV1Api, namespace: str, run_watch: Runner
) -> None:
    names = [f"cm-{i:02d}" for i in range(25)]
    for name in names:
        core.create_namespaced_config_map(namespace, configmap(name), _request_timeout=T)
    bookmarks, first = MemoryBookmarks(), Recorder()
    running = run_watch(watch_of(api, namespace, first, bookmarks, page_size=10))

    wait_for(lambda: running.watch.status.synced, what="initial list")
    assert first.resyncs == [refs(namespace, *names)]
    core.create_namespaced_config_map(namespace, configmap("late"), _request_timeout=T)
    core.patch_namespaced_config_map("cm-00", namespace, {"data": {"k": "v"}}, _request_timeout=T)
    wait_for(
        lambda: first.saw("ADDED", "late") and first.saw("MODIFIED", "cm-00"), what="events after the list"
    )
    running.halt()

    core.create_namespaced_config_map(namespace, configmap("while-down"), _request_timeout=T)
    core.delete_namespaced_config_map("cm-01", namespace, _request_timeout=T)
    core.patch_namespaced_config_map("cm-02", namespace, {"data": {"k": "v"}}, _request_timeout=T)

    second = Recorder()
    resumed = run_watch(watch_of(api, namespace, second, bookmarks, page_size=10))
    wait_for(
        lambda: (
            second.saw("ADDED", "while-down")
            and second.saw("DELETED", "cm-01")
            and second.saw("MODIFIED", "cm-02")
        ),
        what="changes made while the watcher was down",
    )
    assert second.resyncs == [], "a watcher with a bookmark resumes instead of relisting"
    assert resumed.watch.status.synced and resumed.watch.status.healthy


def test_gone_relists_and_resyncs_the_union_of_known_and_listed(
    api: client.ApiClient, core: client.CoreV1Api, namespace: str, run_watch: Runner
) -> None:
    for name in ("a", "b", "c", "churn"):
        core.create_namespaced_config_map(namespace, configmap(name), _request_timeout=T)
    bookmarks, first = MemoryBookmarks(), Recorder()
    running = run_watch(watch_of(api, namespace, first, bookmarks))
    wait_for(lambda: running.watch.status.synced, what="initial list")
    running.halt()

    core.delete_namespaced_config_map("a", namespace, _request_timeout=T)
    core.create_namespaced_config_map(namespace, configmap("d"), _request_timeout=T)
    for i in range(WATCH_HISTORY + 20):  # push the stored resourceVersion out of the watch window
        core.patch_namespaced_config_map("churn", namespace, {"data": {"i": str(i)}}, _request_timeout=T)

    second = Recorder()
    run_watch(watch_of(api, namespace, second, bookmarks))
    wait_for(lambda: second.resyncs, what="a relist after 410 Gone")
    assert second.resyncs[0] == refs(namespace, "a", "b", "c", "d", "churn")
    assert bookmarks.get(f"cm-{namespace}").refs == refs(namespace, "b", "c", "d", "churn")  # type: ignore[union-attr]
    assert not any(t == "DELETED" for t, _, _ in second.events), "a relist never invents deletes"

    core.delete_namespaced_config_map("b", namespace, _request_timeout=T)
    wait_for(lambda: second.saw("DELETED", "b"), what="watching again after the relist")


def test_dropped_connection_resumes_without_losing_events(
    devcluster: DevclusterProcess,
    api: client.ApiClient,
    core: client.CoreV1Api,
    namespace: str,
    run_watch: Runner,
) -> None:
    with tcp_proxy(devcluster.url) as proxy:
        proxied = for_url(api, proxy.url)
        recorder = Recorder()
        running = run_watch(watch_of(proxied, namespace, recorder, MemoryBookmarks(), inactivity_timeout=1.0))
        wait_for(lambda: running.watch.status.healthy, what="watch connected")
        connections = proxy.accepted

        proxy.cut()
        changed = [f"gap-{i}" for i in range(10)]
        for name in changed:
            core.create_namespaced_config_map(namespace, configmap(name), _request_timeout=T)
        wait_for(
            lambda: set(changed) <= recorder.touched(), timeout=10, what="every change made during the gap"
        )
        assert proxy.accepted > connections, "the watch reconnected"
        assert recorder.resyncs == [refs(namespace)], "resumed from its resourceVersion, no relist"
        running.halt()
        close_client(proxied)


def test_silent_stream_trips_the_watchdog_and_readiness(
    devcluster: DevclusterProcess,
    api: client.ApiClient,
    core: client.CoreV1Api,
    namespace: str,
    run_watch: Runner,
) -> None:
    with tcp_proxy(devcluster.url) as proxy:
        proxied = for_url(api, proxy.url)
        recorder = Recorder()
        running = run_watch(watch_of(proxied, namespace, recorder, MemoryBookmarks(), inactivity_timeout=1.0))
        wait_for(lambda: running.watch.status.healthy, what="watch connected")

        stalled_at = time.monotonic()
        proxy.stall()
        changed = [f"quiet-{i}" for i in range(5)]
        for name in changed:
            core.create_namespaced_config_map(namespace, configmap(name), _request_timeout=T)
        wait_for(
            lambda: not running.watch.status.healthy, timeout=3, what="the watchdog to notice the silence"
        )
        assert time.monotonic() - stalled_at < 1.0 + 1.5
        assert "no event" in (running.watch.status.last_error or "")

        proxy.resume()
        wait_for(lambda: running.watch.status.healthy, timeout=10, what="healthy again")
        wait_for(
            lambda: set(changed) <= recorder.touched(), timeout=10, what="every change made while silent"
        )
        running.halt()
        close_client(proxied)


@pytest.fixture
def stop_wait(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> float:
    """A short ``STOP_WAIT`` (returned), with the stop's lines captured."""
    caplog.set_level(logging.INFO, logger="syncflow.watch")
    monkeypatch.setattr(watches_module, "STOP_WAIT", 0.5)
    return 0.5


def test_a_stop_leaves_a_watch_blocked_on_a_server_that_does_not_answer_after_a_bounded_wait(
    devcluster: DevclusterProcess,
    api: client.ApiClient,
    core: client.CoreV1Api,
    namespace: str,
    caplog: pytest.LogCaptureFixture,
    stop_wait: float,
) -> None:
    watches, recorder = WatchSet(), Recorder()
    with tcp_proxy(devcluster.url) as proxy:
        proxied = for_url(api, proxy.url)
        blocked = watch_of(proxied, namespace, recorder, MemoryBookmarks())
        answering = watch_of(api, namespace, Recorder(), MemoryBookmarks())
        answering.name = "answering"
        watches.start(blocked.name, blocked)
        watches.start(answering.name, answering)
        thread = watches.watches[blocked.name][2]
        wait_for(lambda: blocked.status.healthy and answering.status.healthy, what="both watches connected")
        connections = proxy.accepted
        proxy.hold_replies()  # the server gets the next watch request; its answer is held back
        proxy.cut()
        wait_for(lambda: proxy.accepted > connections, what="the watch to send its request again")
        core.create_namespaced_config_map(namespace, configmap("while-held"), _request_timeout=T)

        stopper = threading.Thread(target=watches.stop_all, daemon=True)
        stopper.start()
        stopper.join(10)
        assert not stopper.is_alive(), "the stop waited for a request the server never answers"
        assert logged(caplog, "watch.stop_abandoned") == [{"watch": blocked.name, "waited_s": stop_wait}]
        assert [f["watch"] for f in logged(caplog, "watch.stopped")] == ["answering"]
        assert thread.is_alive(), "the blocked watch is left, not waited for"

        proxy.resume()  # the answer comes after the stop, with the change made meanwhile
        wait_for(lambda: not thread.is_alive(), what="the left watch to end once answered")
    assert not recorder.saw("ADDED", "while-held"), "a watch given up took an event after its stop"
    close_client(proxied)


@pytest.mark.usefixtures("stop_wait")
def test_a_watch_given_up_while_it_lists_reports_and_stores_nothing_when_the_page_comes(
    devcluster: DevclusterProcess, api: client.ApiClient, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    watches, recorder, bookmarks = WatchSet(), Recorder(), MemoryBookmarks()
    with tcp_proxy(devcluster.url) as proxy:
        proxy.hold_replies()  # the list's first page is asked for; its answer is held back
        proxied = for_url(api, proxy.url)
        listing = watch_of(proxied, namespace, recorder, bookmarks)
        watches.start(listing.name, listing)
        thread = watches.watches[listing.name][2]
        wait_for(lambda: proxy.accepted == 1, what="the list's request")
        watches.stop_all()
        assert [f["watch"] for f in logged(caplog, "watch.stop_abandoned")] == [listing.name]

        proxy.resume()  # the page comes after the stop
        wait_for(lambda: not thread.is_alive(), what="the given-up watch to end once its page came")
    assert recorder.resyncs == [] and recorder.events == []
    assert bookmarks.get(listing.name) is None, "a watch given up stored a resume point afterwards"
    close_client(proxied)


def test_unreachable_server_is_unhealthy_logged_and_reports_nothing(
    api: client.ApiClient, run_watch: Runner, caplog: pytest.LogCaptureFixture
) -> None:
    with tcp_proxy(
        "http://127.0.0.1:9"
    ) as proxy:  # nothing listens on the discard port: every accept fails upstream
        unreachable = for_url(api, proxy.url)
    recorder = Recorder()
    caplog.set_level(logging.WARNING, logger="syncflow.kube.watch")
    running = run_watch(watch_of(unreachable, "nowhere", recorder, MemoryBookmarks(), connect_timeout=1.0))
    wait_for(
        lambda: len([r for r in caplog.records if r.getMessage() == "watch.failed"]) >= 2,
        what="failures logged",
    )
    status = running.watch.status
    assert not status.synced and not status.healthy and status.last_error
    assert recorder.events == [] and recorder.resyncs == []
    fields = next(r for r in caplog.records if r.getMessage() == "watch.failed").syncflow_fields  # type: ignore[attr-defined]
    assert fields["watch"] == "cm-nowhere" and fields["retry_in"] > 0 and fields["error"]
    running.halt()
    close_client(unreachable)


class OriginRecorder(Recorder):
    """Records the event origin each event is handled under."""

    def __init__(self) -> None:
        super().__init__()
        self.origins: dict[str, echoes.Origin | None] = {}

    def on_event(self, type: str, obj: dict[str, Any], ref: ObjectRef) -> None:
        self.origins[ref.name] = echoes.current_event()
        super().on_event(type, obj, ref)


def test_events_are_handled_under_their_origin_so_the_queue_can_drop_echoes(
    api: client.ApiClient, core: client.CoreV1Api, namespace: str, run_watch: Runner
) -> None:
    recorder = OriginRecorder()
    watch = ResourceWatch(
        api,
        f"/api/v1/namespaces/{namespace}/configmaps",
        f"cm-{namespace}",
        recorder,
        MemoryBookmarks(),
        echo_side="local",
    )
    running = run_watch(watch)
    wait_for(lambda: running.watch.status.synced, what="initial list")
    created = core.create_namespaced_config_map(namespace, configmap("mine"), _request_timeout=T)
    wait_for(lambda: recorder.saw("ADDED", "mine"), what="the event")
    origin = recorder.origins["mine"]
    rv = created.metadata.resource_version
    assert origin == echoes.Origin("local", ObjectRef("", namespace, "mine"), rv)
    assert echoes.current_event() is None, "the origin is only set while the event is handled"


class CountingBookmarks(MemoryBookmarks):
    """Memory bookmarks that count their stores."""

    def __init__(self) -> None:
        super().__init__()
        self.stores = 0

    def set(self, name: str, resource_version: str, **refs: Any) -> None:  # type: ignore[override]
        self.stores += 1
        super().set(name, resource_version, **refs)


def test_a_burst_of_events_stores_its_resume_point_a_few_times_and_loses_no_ref(
    api: client.ApiClient, core: client.CoreV1Api, namespace: str, run_watch: Runner
) -> None:
    bookmarks, recorder = CountingBookmarks(), Recorder()
    running = run_watch(watch_of(api, namespace, recorder, bookmarks))
    wait_for(lambda: running.watch.status.synced, what="initial list")
    listed_stores = bookmarks.stores
    names = [f"burst-{i:03d}" for i in range(120)]
    for name in names:
        core.create_namespaced_config_map(namespace, configmap(name), _request_timeout=T)
    core.delete_namespaced_config_map("burst-000", namespace, _request_timeout=T)
    wait_for(lambda: recorder.saw("DELETED", "burst-000"), what="every event of the burst")
    running.halt()  # the connection ends: what was not stored yet is stored now

    assert bookmarks.stores - listed_stores < 30, f"{bookmarks.stores - listed_stores} stores for 121 events"
    stored = bookmarks.get(f"cm-{namespace}")
    assert stored is not None and stored.resource_version == running.watch.status.resource_version
    assert stored.refs == refs(namespace, *names[1:])


class StoreDownError(Exception):
    """The bookmark store is unreachable."""


class FailingBookmarks(MemoryBookmarks):
    """Memory bookmarks whose next store fails once ``fail_next`` is set, as when Redis goes away."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_next = False

    def set(self, name: str, resource_version: str, **refs: Any) -> None:  # type: ignore[override]
        if self.fail_next:
            self.fail_next = False
            raise StoreDownError("the bookmark store is unreachable")
        super().set(name, resource_version, **refs)


def test_a_store_that_fails_as_a_connection_drops_is_logged_and_the_drop_is_what_the_watch_reports(
    devcluster: DevclusterProcess,
    api: client.ApiClient,
    core: client.CoreV1Api,
    namespace: str,
    run_watch: Runner,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(watch_module, "BOOKMARK_INTERVAL", 1e9)  # only a connection's end stores events
    caplog.set_level(logging.INFO, logger="syncflow.kube.watch")
    with tcp_proxy(devcluster.url) as proxy:
        proxied = for_url(api, proxy.url)
        bookmarks, recorder = FailingBookmarks(), Recorder()
        running = run_watch(watch_of(proxied, namespace, recorder, bookmarks, inactivity_timeout=1.0))
        wait_for(lambda: running.watch.status.healthy, what="watch connected")
        core.create_namespaced_config_map(namespace, configmap("unsaved"), _request_timeout=T)
        wait_for(lambda: recorder.saw("ADDED", "unsaved"), what="the event, not stored yet")

        bookmarks.fail_next = True  # the store as the connection ends
        proxy.cut()
        wait_for(lambda: logged(caplog, "watch.failed"), what="the dropped connection reported")
        [save_failed] = logged(caplog, "watch.save_failed")
        assert save_failed["watch"] == f"cm-{namespace}" and "StoreDownError" in save_failed["error"]
        assert all("StoreDownError" not in f["error"] for f in logged(caplog, "watch.failed")), (
            "the drop, not the failed store, is the watch's error"
        )

        wait_for(lambda: running.watch.status.healthy, timeout=10, what="reconnected")
        running.halt()  # the connection ends cleanly: the change the failed store held is stored now
        stored = bookmarks.get(f"cm-{namespace}")
        assert stored is not None and ObjectRef("", namespace, "unsaved") in stored.refs
        close_client(proxied)


def logged(caplog: pytest.LogCaptureFixture, event: str) -> list[dict[str, Any]]:
    """The fields of every ``event`` line logged so far."""
    return [r.syncflow_fields for r in caplog.records if r.getMessage() == event]  # type: ignore[attr-defined]


class RefusingHandler(Recorder):
    """A handler that cannot take any event, as when the queue's Redis is gone."""

    def on_event(self, type: str, obj: dict[str, Any], ref: ObjectRef) -> None:
        raise StoreDownError("the queue is unreachable")


def test_events_that_cannot_be_taken_are_retried_ever_more_slowly(
    api: client.ApiClient,
    core: client.CoreV1Api,
    namespace: str,
    run_watch: Runner,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="syncflow.kube.watch")
    running = run_watch(watch_of(api, namespace, RefusingHandler(), MemoryBookmarks()))
    wait_for(lambda: running.watch.status.healthy, what="watch connected")
    core.create_namespaced_config_map(namespace, configmap("stuck"), _request_timeout=T)

    wait_for(lambda: len(logged(caplog, "watch.failed")) >= 3, timeout=15, what="three failed connections")
    third = logged(caplog, "watch.failed")[2]
    assert "StoreDownError" in third["error"]
    # delays are drawn from [d/2, d], d doubling per failure from `initial`: the third is in [2d, 4d]
    assert third["retry_in"] > running.watch.backoff.initial, "every connection reset the backoff"


class DeferringRecorder(Recorder):
    """A handler that defers each event to the end of its read, as the watch process defers its queue
    adds (``syncflow.kube.deferred``); each flush notes the watch's remembered resourceVersion then.
    With ``refuse``, the first flush holding that name fails, as when the queue's Redis is gone."""

    def __init__(self, refuse: str = "") -> None:
        super().__init__()
        self.watch: ResourceWatch | None = None
        self.flushed: list[tuple[str, list[tuple[str, str]]]] = []
        self.refuse = refuse

    def on_event(self, type: str, obj: dict[str, Any], ref: ObjectRef) -> None:
        super().on_event(type, obj, ref)
        assert deferred.defer(self.flush, (ref.name, obj["metadata"]["resourceVersion"]))

    def flush(self, items: list[tuple[str, str]]) -> None:
        assert self.watch is not None
        if self.refuse in {name for name, _ in items}:
            self.refuse = ""
            raise StoreDownError("the queue is unreachable")
        with self.lock:
            self.flushed.append((self.watch.status.resource_version, items))

    def flushed_names(self) -> set[str]:
        with self.lock:
            return {name for _, items in self.flushed for name, _ in items}


def test_what_a_reads_events_defer_is_done_before_the_watch_remembers_them(
    api: client.ApiClient, core: client.CoreV1Api, namespace: str, run_watch: Runner
) -> None:
    recorder = DeferringRecorder()
    watch = watch_of(api, namespace, recorder, MemoryBookmarks())
    recorder.watch = watch
    running = run_watch(watch)
    wait_for(lambda: running.watch.status.synced, what="initial list")
    names = [f"read-{i:02d}" for i in range(40)]
    for name in names:
        core.create_namespaced_config_map(namespace, configmap(name), _request_timeout=T)
    wait_for(lambda: recorder.flushed_names() >= set(names), what="every event's deferred work done")
    for remembered, items in recorder.flushed:
        assert all(int(remembered) < int(rv) for _, rv in items), "remembered only after the flush"
    wait_for(
        lambda: (
            int(running.watch.status.resource_version) >= max(int(rv) for _, rv in recorder.flushed[-1][1])
        ),
        what="the events remembered after their flush",
    )


def test_a_read_whose_deferred_work_fails_is_read_again_and_loses_no_event(
    api: client.ApiClient, core: client.CoreV1Api, namespace: str, run_watch: Runner
) -> None:
    recorder = DeferringRecorder(refuse="refused")
    watch = watch_of(api, namespace, recorder, MemoryBookmarks())
    recorder.watch = watch
    running = run_watch(watch)
    wait_for(lambda: running.watch.status.synced, what="initial list")
    core.create_namespaced_config_map(namespace, configmap("refused"), _request_timeout=T)
    wait_for(
        lambda: "refused" in recorder.flushed_names(),
        timeout=30,
        what=lambda: f"the event's work done on a retry; saw {recorder.events}, watch {running.watch.status}",
    )
    assert recorder.refuse == "", "the first flush failed"
    assert [t for t, ref, _ in recorder.events if ref.name == "refused"] == ["ADDED", "ADDED"], (
        "the event came again after the failed flush"
    )
