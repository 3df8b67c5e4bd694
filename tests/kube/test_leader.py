"""Leader election on a real devcluster Lease: one leader, takeover after a crash, release on stop."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from kubernetes import client

from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.leader import LeaderElector
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

LEASE, RENEW, RETRY = 2.0, 1.5, 0.2


@dataclass
class Candidate:
    """One elector running in a thread, counting its callbacks."""

    elector: LeaderElector
    stop: threading.Event = field(default_factory=threading.Event)
    started: int = 0
    stopped: int = 0
    thread: threading.Thread | None = None

    def start(self) -> Candidate:
        """Campaign in a thread."""
        self.thread = threading.Thread(
            target=self.elector.run, args=(self._on_started, self._on_stopped, self.stop)
        )
        self.thread.start()
        return self

    def halt(self) -> None:
        """Stop campaigning and wait for the thread."""
        self.stop.set()
        assert self.thread is not None
        self.thread.join(5)
        assert not self.thread.is_alive()

    def _on_started(self) -> None:
        self.started += 1

    def _on_stopped(self) -> None:
        self.stopped += 1


@pytest.fixture
def lease_name() -> str:
    """A fresh Lease name."""
    return "syncagent.t-" + uuid.uuid4().hex[:8]


@pytest.fixture
def candidates(api: client.ApiClient, lease_name: str) -> Iterator[list[Candidate]]:
    """Two candidates, ``a`` and ``b``; ``a`` crashes instead of releasing when stopped."""
    made = [
        Candidate(LeaderElector(api, "default", lease_name, "a", LEASE, RENEW, RETRY, release_on_stop=False)),
        Candidate(LeaderElector(api, "default", lease_name, "b", LEASE, RENEW, RETRY)),
    ]
    yield made
    for candidate in made:
        if candidate.thread and candidate.thread.is_alive():
            candidate.halt()


def lease_spec(api: client.ApiClient, name: str) -> dict[str, object]:
    """The Lease's spec as stored."""
    spec: dict[str, object] = JsonApi(api).get(
        f"/apis/coordination.k8s.io/v1/namespaces/default/leases/{name}"
    )["spec"]
    return spec


def test_two_candidates_one_leader_and_takeover_after_a_crash(
    api: client.ApiClient, lease_name: str, candidates: list[Candidate]
) -> None:
    a, b = candidates
    a.start()
    wait_for(lambda: a.elector.is_leader, what="the first candidate to lead")
    b.start()
    wait_for(lambda: b.elector.observed_holder == "a", what="the standby to see the Lease")
    assert a.elector.is_leader and not b.elector.is_leader and b.started == 0
    spec = lease_spec(api, lease_name)
    assert spec["holderIdentity"] == "a" and spec["leaseDurationSeconds"] == 2
    assert str(spec["renewTime"]).endswith("Z") and len(str(spec["renewTime"])) == len(
        "2026-11-25T00:00:00.000000Z"
    )

    crashed_at = time.monotonic()
    a.halt()  # no release: the Lease stays held by "a" until it expires
    assert lease_spec(api, lease_name)["holderIdentity"] == "a"
    wait_for(lambda: b.elector.is_leader, timeout=LEASE + 2, what="the standby to take over")
    assert time.monotonic() - crashed_at <= LEASE + 3 * RETRY + 0.5
    spec = lease_spec(api, lease_name)
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert (a.started, a.stopped, b.started) == (1, 1, 1)


def test_clean_stop_releases_so_the_standby_takes_over_at_once(
    api: client.ApiClient, lease_name: str, candidates: list[Candidate]
) -> None:
    _, b = candidates
    b.start()
    wait_for(lambda: b.elector.is_leader, what="b to lead")
    standby = Candidate(LeaderElector(api, "default", lease_name, "c", LEASE, RENEW, RETRY)).start()
    try:
        wait_for(lambda: standby.elector.observed_holder == "b", what="the standby to see the Lease")
        stopped_at = time.monotonic()
        b.halt()
        assert b.stopped == 1 and not b.elector.is_leader
        wait_for(
            lambda: standby.elector.is_leader, timeout=LEASE, what="the standby to take the released Lease"
        )
        assert time.monotonic() - stopped_at < LEASE / 2, (
            "a released Lease is taken without waiting for expiry"
        )
        assert lease_spec(api, lease_name)["holderIdentity"] == "c"
    finally:
        standby.halt()
    assert lease_spec(api, lease_name).get("holderIdentity") in (None, "")


def test_rejects_inconsistent_durations(api: client.ApiClient) -> None:
    with pytest.raises(ValueError, match="renew_deadline"):
        LeaderElector(api, "default", "x", "me", lease_duration=5, renew_deadline=5, retry_period=1)
