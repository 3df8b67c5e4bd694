"""Leader election on a real devcluster Lease: one leader, takeover after a crash, release on stop."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from prometheus_client import REGISTRY

from syncflow.kube.clients import for_url, load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.leader import LeaderElectionError, LeaderElector
from tests.kube.conftest import close_client
from tests.support.devcluster import DevclusterProcess, start_devcluster
from tests.support.proxy import tcp_proxy
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


def lease_spec(api: client.ApiClient, name: str, namespace: str = "default") -> dict[str, object]:
    """The Lease's spec as stored."""
    spec: dict[str, object] = JsonApi(api).get(
        f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
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


def test_the_leader_status_gauge_is_one_while_leading_and_zero_after(
    lease_name: str, candidates: list[Candidate]
) -> None:
    def status() -> float | None:
        return REGISTRY.get_sample_value("leader_election_master_status", {"name": lease_name})

    _, b = candidates
    b.start()
    wait_for(lambda: b.elector.is_leader, what="b to lead")
    assert status() == 1
    b.halt()
    assert status() == 0


def test_rejects_inconsistent_durations(api: client.ApiClient) -> None:
    with pytest.raises(ValueError, match="renew_deadline"):
        LeaderElector(api, "default", "x", "me", lease_duration=5, renew_deadline=5, retry_period=1)


def events(caplog: pytest.LogCaptureFixture, name: str) -> list[dict[str, object]]:
    """The fields of every log event called ``name``."""
    return [r.syncflow_fields for r in caplog.records if r.getMessage() == name]  # type: ignore[attr-defined]


def test_a_deleted_namespace_is_created_again_and_said_so(
    api: client.ApiClient, core: client.CoreV1Api, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    leader = Candidate(LeaderElector(api, namespace, "syncagent.ns-test", "a", LEASE, RENEW, RETRY)).start()
    try:
        wait_for(lambda: leader.elector.is_leader and leader.elector.healthy, what="a to lead")
        with caplog.at_level(logging.INFO, logger="syncflow.kube.leader"):
            core.delete_namespace(namespace, _request_timeout=(5, 10))
            wait_for(lambda: events(caplog, "leader.namespace_created"), timeout=30, what="a new namespace")
            [created] = events(caplog, "leader.namespace_created")
            assert created["namespace"] == namespace
            # the namespace comes back before the Lease in it: a 404 meanwhile is no failure
            wait_for(
                lambda: (
                    leader.elector.is_leader
                    and JsonApi(api).exists(
                        f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/syncagent.ns-test"
                    )
                ),
                what="the Lease back",
            )
        assert lease_spec(api, "syncagent.ns-test", namespace)["holderIdentity"] == "a"
        assert leader.elector.healthy
    finally:
        leader.halt()


def test_lease_errors_are_logged_once_then_rate_limited_and_health_shows_them(
    devcluster: DevclusterProcess, api: client.ApiClient, lease_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    with tcp_proxy(devcluster.url) as proxy:
        through = for_url(api, proxy.url)
        elector = LeaderElector(through, "default", lease_name, "a", LEASE, RENEW, RETRY, complain_every=1.0)
        candidate = Candidate(elector).start()
        try:
            wait_for(lambda: elector.is_leader and elector.healthy, what="a to lead")
            with caplog.at_level(logging.INFO, logger="syncflow.kube.leader"):
                proxy.block()  # the service cluster stops answering
                wait_for(lambda: elector.failures >= 4, timeout=10, what="failed attempts")
                assert len(events(caplog, "leader.lease_failed")) == 1, "one line for one distinct error"
                assert elector.last_error and "\n" not in elector.last_error
                wait_for(lambda: not elector.healthy, timeout=LEASE + 2, what="health to say so")
                wait_for(lambda: len(events(caplog, "leader.lease_failed")) == 2, timeout=5, what="a repeat")
                assert int(str(events(caplog, "leader.lease_failed")[1]["repeated"])) >= 1
                proxy.unblock()
                wait_for(lambda: elector.healthy and elector.is_leader, timeout=10, what="recovery")
                [recovered] = events(caplog, "leader.lease_recovered")
                assert int(str(recovered["failures"])) >= 4 and elector.last_error is None
        finally:
            candidate.halt()
            close_client(through)


@pytest.fixture(scope="module")
def kcp_with_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """A kcp devcluster where the identity ``agent`` may use Leases but not create namespaces."""
    server = start_devcluster(
        tmp_path_factory.mktemp("kcp-agent"), "--kcp", "--token", f"agent={AGENT_TOKEN}", token=ADMIN_TOKEN
    )
    admin = JsonApi(load_client(str(server.kubeconfig)))
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    admin.create(
        f"{rbac}/clusterroles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "leases"},
            "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]}],
        },
    )
    admin.create(
        f"{rbac}/clusterrolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "agent-leases"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "leases"},
            "subjects": [{"kind": "User", "name": "agent"}],
        },
    )
    # the export whose endpoint slice syncflow watch resolves before anything else
    admin.create("/apis/apis.kcp.io/v1alpha1/apiexports", {"metadata": {"name": "unused"}, "spec": {}})
    yield server
    server.stop()


ADMIN_TOKEN, AGENT_TOKEN = "admin-token-1", "agent-token-1"


def test_a_namespace_the_agent_may_not_create_fails_loudly(
    kcp_with_agent: DevclusterProcess, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kubeconfig = yaml.safe_load(kcp_with_agent.kubeconfig.read_text())
    kubeconfig["users"][0]["user"] = {"token": AGENT_TOKEN}
    (tmp_path / "agent.kubeconfig").write_text(yaml.safe_dump(kubeconfig))
    agent = load_client(str(tmp_path / "agent.kubeconfig"))
    elector = LeaderElector(agent, "gone", "syncagent.forbidden", "a", LEASE, RENEW, RETRY)
    expected = "namespace gone of the leader Lease is missing and a may not create it: 403 Forbidden"
    try:
        with (
            caplog.at_level(logging.INFO, logger="syncflow.kube.leader"),
            pytest.raises(LeaderElectionError, match=expected),
        ):
            elector.run(lambda: None, lambda: None, threading.Event())
        [line] = events(caplog, "leader.namespace_forbidden")
        assert "403 Forbidden" in str(line["error"])
        assert not elector.is_leader and not elector.healthy
    finally:
        close_client(agent)


def test_syncflow_watch_exits_with_one_line_when_it_may_not_create_its_namespace(
    kcp_with_agent: DevclusterProcess, tmp_path: Path
) -> None:
    kubeconfig = yaml.safe_load(kcp_with_agent.kubeconfig.read_text())
    kubeconfig["users"][0]["user"] = {"token": AGENT_TOKEN}
    (tmp_path / "agent.kubeconfig").write_text(yaml.safe_dump(kubeconfig))
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "syncflow"),
            "watch",
            "--kubeconfig",
            str(tmp_path / "agent.kubeconfig"),
            "--kcp-kubeconfig",
            str(kcp_with_agent.kubeconfig),
            "--apiexportendpointslice-ref",
            "unused",
            "--namespace",
            "gone",
            "--agent-name",
            "t" + uuid.uuid4().hex[:8],
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.rstrip()
        .splitlines()[-1]
        .startswith("Error: namespace gone of the leader Lease is missing and ")
    )
