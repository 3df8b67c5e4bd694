"""The overview's view of the agent's processes: the leader Lease read from a real devcluster, the
latency quantiles scraped from real /metrics endpoints, and what each says when nothing answers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from syncflow.console import latency as latency_module
from syncflow.console.agent import ping_workers, read_leader
from syncflow.console.latency import latency, quantile
from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi
from tests.support.devcluster import DevclusterProcess, start_devcluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    server = start_devcluster(tmp_path_factory.mktemp("lease"), "--no-simulate")
    yield server
    server.stop()


def test_the_leader_is_the_lease_holder(cluster: DevclusterProcess) -> None:
    api = load_client(str(cluster.kubeconfig))
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "syncagent.console-lead", "namespace": "default"},
        "spec": {"holderIdentity": "watch-0_abc", "renewTime": "2026-11-29T03:00:00.000000Z"},
    }
    JsonApi(api).create("/apis/coordination.k8s.io/v1/namespaces/default/leases", lease)
    leader = read_leader(lambda: api, "default", "console-lead")
    assert (leader.holder, leader.lease, leader.error) == (
        "watch-0_abc",
        "default/syncagent.console-lead",
        "",
    )
    missing = read_leader(lambda: api, "default", "console-nobody")
    assert missing.holder is None and "no Lease" in missing.error


def test_an_unreachable_lease_is_a_message(cluster: DevclusterProcess) -> None:
    api = load_client(str(cluster.kubeconfig))
    api.configuration.host = "http://127.0.0.1:9"
    leader = read_leader(lambda: api, "default", "x")
    assert leader.holder is None and leader.error.startswith("cannot read the Lease")

    def no_kubeconfig() -> None:
        raise ValueError("--kubeconfig: no such file")

    assert "no such file" in read_leader(no_kubeconfig, "default", "x").error  # type: ignore[arg-type]


def test_workers_that_answer_a_ping() -> None:
    live = ping_workers(lambda timeout: [{"celery@b": {"ok": "pong"}}, {"celery@a": {"ok": "pong"}}])
    assert live.live == ["celery@a", "celery@b"] and live.error == ""
    assert ping_workers(lambda timeout: None).live == []

    def broker_away(timeout: float) -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    assert ping_workers(broker_away).error.startswith("cannot ping the workers")  # type: ignore[arg-type]


def test_latency_quantiles_over_every_endpoint(metrics_urls: list[str]) -> None:
    answer = latency([*metrics_urls, "http://127.0.0.1:9/metrics"])
    assert answer.samples == 230 and answer.sources == metrics_urls
    assert answer.p50 is not None and 0.005 < answer.p50 <= 0.025
    assert answer.p99 is not None and 1 < answer.p99 <= 5
    assert "127.0.0.1:9" in answer.error, "the endpoint that did not answer is named"


def test_latency_of_each_rule_over_every_endpoint_and_direction(metrics_urls: list[str]) -> None:
    rules = {rule.name: rule for rule in latency(metrics_urls).rules}
    assert list(rules) == ["certs", "dbs"]
    dbs, certs = rules["dbs"], rules["certs"]
    assert dbs.samples == 210, "both endpoints and both directions of the rule"
    assert dbs.p50 is not None and 0.005 < dbs.p50 <= 0.025
    assert dbs.p99 is not None and 1 < dbs.p99 <= 5
    assert certs.samples == 20
    assert certs.p50 == pytest.approx(3.0) and certs.p99 is not None and 4.9 < certs.p99 <= 5
    assert latency(metrics_urls).of_rule("queues") is None, "a rule without samples has no latency"


def test_latency_keeps_the_rules_with_the_most_samples(
    metrics_urls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(latency_module, "MAX_RULES", 1)
    answer = latency(metrics_urls)
    assert [rule.name for rule in answer.rules] == ["dbs"]
    assert answer.samples == 230, "the agent's quantiles still count every rule"


def test_latency_is_unknown_when_no_endpoint_answers() -> None:
    assert latency([]).p50 is None and "--metrics-url" in latency([]).error
    away = latency(["http://127.0.0.1:9/metrics"])
    assert away.p50 is None and away.p99 is None and away.error


def test_quantile_interpolates_like_prometheus() -> None:
    buckets = {0.1: 50.0, 1.0: 100.0, float("inf"): 100.0}
    assert quantile(0.5, buckets) == pytest.approx(0.1)
    assert quantile(0.75, buckets) == pytest.approx(0.55)
    assert quantile(0.5, {float("inf"): 0.0}) is None
