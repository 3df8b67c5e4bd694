"""Stopping a term's watches: all are told before any is waited for, the wait is bounded, and the
watcher's wait between passes ends at the stop."""

from __future__ import annotations

import logging
import threading
from typing import Any, cast

import pytest

from syncflow.kube.watch import ResourceWatch
from syncflow.sync import watches as watches_module
from syncflow.sync.orchestration import SyncManager
from syncflow.sync.watcher import TermWatcher
from syncflow.sync.watches import WatchSet
from tests.support.waiting import wait_for

DEADLINE = 10.0
PEER_WAIT = 5.0


class PeerWatch:
    """Ends once its own stop is set and then every peer's (each waited for up to ``PEER_WAIT``), and
    records whether the peers had been told: a set that waits for one watch before telling the next
    never gets them all."""

    def __init__(self, name: str, stops: dict[str, threading.Event]) -> None:
        self.name = name
        self.stops = stops
        self.saw_all_told: bool | None = None

    def run(self, stop: threading.Event) -> None:
        self.stops[self.name] = stop
        stop.wait(DEADLINE)
        self.saw_all_told = all(peer.wait(PEER_WAIT) for peer in list(self.stops.values()))


class DeafWatch:
    """Blocked as in a request to a server that never answers: ignores its stop until ``release``."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def run(self, stop: threading.Event) -> None:
        self.release.wait(DEADLINE)


def as_watch(watch: object) -> ResourceWatch:
    return cast(ResourceWatch, watch)


def messages(caplog: pytest.LogCaptureFixture, event: str) -> list[dict[str, Any]]:
    return [getattr(r, "syncflow_fields", {}) for r in caplog.records if r.getMessage() == event]


def test_every_watch_is_told_to_stop_before_any_is_waited_for(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="syncflow.watch")
    stops: dict[str, threading.Event] = {}
    peers = [PeerWatch(f"w{i}", stops) for i in range(3)]
    watches = WatchSet()
    for peer in peers:
        watches.start(peer.name, as_watch(peer))
    wait_for(lambda: len(stops) == len(peers), what="every watch running")

    watches.stop_all()

    assert [peer.saw_all_told for peer in peers] == [True, True, True]
    assert sorted(f["watch"] for f in messages(caplog, "watch.stopped")) == ["w0", "w1", "w2"]
    assert watches.watches == {}


def test_a_watch_that_does_not_end_is_left_after_the_wait_and_named(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO, logger="syncflow.watch")
    monkeypatch.setattr(watches_module, "STOP_WAIT", 0.2)
    deaf, stops = DeafWatch(), dict[str, threading.Event]()
    polite = PeerWatch("polite", stops)
    watches = WatchSet()
    watches.start("deaf", as_watch(deaf))
    watches.start("polite", as_watch(polite))
    thread = watches.watches["deaf"][2]
    wait_for(lambda: "polite" in stops, what="the polite watch running")
    try:
        stopper = threading.Thread(target=watches.stop_all, daemon=True)
        stopper.start()
        stopper.join(DEADLINE / 2)
        assert not stopper.is_alive(), "stop_all waited past its bound for a watch that never ends"
        assert thread.is_alive()
        assert messages(caplog, "watch.stop_abandoned") == [{"watch": "deaf", "waited_s": 0.2}]
        assert [f["watch"] for f in messages(caplog, "watch.stopped")] == ["polite"]
    finally:
        deaf.release.set()
    wait_for(lambda: not thread.is_alive(), what="the deaf watch to end once released")


def test_only_the_named_watches_stop(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="syncflow.watch")
    stops: dict[str, threading.Event] = {}
    watches = WatchSet()
    for name in ("a", "b", "c"):
        watches.start(name, as_watch(PeerWatch(name, {})))
        stops[name] = watches.watches[name][1]
    watches.stop("a", "c", "not-running")
    assert list(watches.watches) == ["b"]
    assert [name for name, stop in stops.items() if stop.is_set()] == ["a", "c"]
    watches.stop_all()


class CountingManager:
    """A sync manager whose passes succeed; it has no watches."""

    redis = None

    def __init__(self) -> None:
        self.passes = 0

    def reconcile(self) -> None:
        self.passes += 1

    def stop_all(self) -> None:
        """Nothing runs."""


def test_a_stop_ends_the_wait_between_passes_at_once() -> None:
    manager = CountingManager()
    watcher = TermWatcher(cast(SyncManager, manager), interval=3600)
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    wait_for(lambda: manager.passes == 1, what="the first pass")
    stop.set()
    thread.join(DEADLINE)
    assert not thread.is_alive(), "the watcher slept out its interval after the stop"
    assert manager.passes == 1


class ControlledWatcher(TermWatcher):
    """A watcher with one control watch; its manager notes whether that watch had been told to stop
    when the manager's own watches were stopped."""

    def __init__(self, manager: CountingManager, control: PeerWatch) -> None:
        super().__init__(cast(SyncManager, manager), interval=3600)
        self.control_watch = control

    def control_watches(self) -> dict[str, ResourceWatch]:
        return {self.control_watch.name: as_watch(self.control_watch)}


def test_the_control_watches_are_told_before_the_managers_are_waited_for() -> None:
    stops: dict[str, threading.Event] = {}
    told_first: list[bool] = []
    manager = CountingManager()
    watcher = ControlledWatcher(manager, PeerWatch("control", stops))
    manager.stop_all = lambda: told_first.append(stops["control"].is_set())  # type: ignore[method-assign]
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    wait_for(lambda: manager.passes == 1 and "control" in stops, what="the first pass")
    stop.set()
    thread.join(DEADLINE)
    assert not thread.is_alive()
    assert told_first == [True]
    assert watcher.control.watches == {}
