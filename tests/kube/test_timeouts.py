"""API requests end in time when the server hangs: per-request timeouts, cut to a task's deadline,
and at most one retry of a read that timed out."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kubernetes import client

from syncflow.kube.clients import for_url
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.errors import classify
from syncflow.queue.workqueue import Outcome
from syncflow.util.deadline import DeadlineExceededError, deadline
from tests.kube.conftest import close_client
from tests.support.devcluster import DevclusterProcess
from tests.support.proxy import TcpProxy, tcp_proxy

pytestmark = pytest.mark.integration


@pytest.fixture
def hung(devcluster: DevclusterProcess, api: client.ApiClient) -> Iterator[tuple[TcpProxy, JsonApi]]:
    """A client of the devcluster through a proxy that has stopped forwarding (a hung server)."""
    with tcp_proxy(devcluster.url) as proxy:
        through = for_url(api, proxy.url)
        proxy.stall()
        yield proxy, JsonApi(through)
        proxy.resume()
        close_client(through)


def test_requests_of_a_task_end_by_its_deadline(hung: tuple[TcpProxy, JsonApi]) -> None:
    _, json = hung
    started = time.monotonic()
    with deadline(0.5):
        with pytest.raises(Exception) as first:
            json.get("/api/v1/namespaces")  # the default read timeout would be 30 s
        with pytest.raises(DeadlineExceededError):
            json.get("/api/v1/namespaces")  # no time left: not even sent
    assert classify(first.value) is Outcome.TRANSIENT
    assert classify(DeadlineExceededError()) is Outcome.TRANSIENT
    assert time.monotonic() - started < 5


def test_a_read_that_timed_out_is_retried_once(hung: tuple[TcpProxy, JsonApi]) -> None:
    proxy, json = hung
    json.timeout = (1.0, 0.2)
    before = proxy.accepted
    with pytest.raises(Exception) as error:
        json.get("/api/v1/namespaces")
    assert classify(error.value) is Outcome.TRANSIENT
    assert proxy.accepted - before == 2, "one attempt and one retry (urllib3's default makes four)"
