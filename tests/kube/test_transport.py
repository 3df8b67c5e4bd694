"""Kept-alive connections (``syncflow.kube.transport``): one per thread, replaced when the server
closed it, made anew after a fork, a request resent only when its method is idempotent; a client
with a proxy keeps urllib3's pool."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from syncflow.kube.clients import for_url
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.transport import _Response, kept_connections
from syncflow.queue.errors import classify
from syncflow.queue.workqueue import Outcome
from tests.kube.conftest import close_client
from tests.support.devcluster import DevclusterProcess
from tests.support.proxy import TcpProxy, tcp_proxy

pytestmark = pytest.mark.integration

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def proxied(devcluster: DevclusterProcess, api: client.ApiClient) -> Iterator[tuple[TcpProxy, JsonApi]]:
    """A client of the devcluster through a proxy that counts the connections it accepts."""
    with tcp_proxy(devcluster.url) as proxy:
        through = for_url(api, proxy.url)
        yield proxy, JsonApi(through)
        proxy.resume()
        close_client(through)


def configmap() -> dict[str, object]:
    return {"metadata": {"name": f"kept-{uuid.uuid4().hex[:10]}"}, "data": {"a": "b"}}


def test_the_requests_of_a_thread_share_one_connection(proxied: tuple[TcpProxy, JsonApi]) -> None:
    proxy, json = proxied
    for _ in range(10):
        name = json.create(CONFIGMAPS, configmap())["metadata"]["name"]
        assert json.get(f"{CONFIGMAPS}/{name}")["data"] == {"a": "b"}
        json.merge_patch(f"{CONFIGMAPS}/{name}", {"data": {"a": "c"}})
        json.delete(f"{CONFIGMAPS}/{name}")
    assert proxy.accepted == 1
    kept = kept_connections(json.api)
    assert kept is not None and kept._connection().response_class is _Response, "answers read by our reader"
    answers: list[dict[str, object]] = []
    other = threading.Thread(target=lambda: answers.append(json.get(CONFIGMAPS)))
    other.start()
    other.join(timeout=30)
    assert answers and answers[0]["kind"] == "ConfigMapList"
    json.get(CONFIGMAPS)
    assert proxy.accepted == 2, "a second thread has its own connection; the first keeps its one"


def test_clients_of_several_path_prefixes_share_one_connection(proxied: tuple[TcpProxy, JsonApi]) -> None:
    proxy, json = proxied
    default, system = (
        JsonApi(json.api, prefix=f"/api/v1/namespaces/{ns}/") for ns in ("default", "kube-system")
    )
    assert (default.host, system.host) == (
        f"{proxy.url}/api/v1/namespaces/default",
        f"{proxy.url}/api/v1/namespaces/kube-system",
    )
    made = [api.create("/configmaps", configmap())["metadata"] for api in (default, system)]
    assert [m["namespace"] for m in made] == ["default", "kube-system"]
    assert system.get(f"/configmaps/{made[1]['name']}")["data"] == {"a": "b"}
    assert [
        item["metadata"]["name"]
        for item in system.get("/configmaps", fieldSelector=f"metadata.name={made[0]['name']}")["items"]
    ] == []
    for api, m in zip((default, system), made, strict=True):
        api.delete(f"/configmaps/{m['name']}")
    assert proxy.accepted == 1, "one kept connection for both prefixes"


def test_a_connection_the_server_closed_is_replaced_before_a_request_goes_out(
    proxied: tuple[TcpProxy, JsonApi],
) -> None:
    proxy, json = proxied
    json.get(CONFIGMAPS)
    proxy.cut()  # the server side closes the kept connection
    created = json.create(CONFIGMAPS, configmap())  # a POST is never resent: it must go out on a new one
    assert created["data"] == {"a": "b"}
    assert proxy.accepted == 2


def test_a_request_that_failed_after_it_went_out_is_resent_only_if_idempotent(
    proxied: tuple[TcpProxy, JsonApi],
) -> None:
    proxy, json = proxied
    json.timeout = (1.0, 0.2)
    proxy.stall()
    for method, resent in (("POST", False), ("PATCH", False), ("PUT", True), ("GET", True)):
        before = proxy.accepted
        with pytest.raises(Exception) as error:
            json.request(method, f"{CONFIGMAPS}/x" if method != "POST" else CONFIGMAPS, body=configmap())
        assert classify(error.value) is Outcome.TRANSIENT
        assert proxy.accepted - before == (2 if resent else 1), method


class SimulatedTimeLimitError(Exception):
    """What Celery's soft time limit raises, from a signal handler, wherever the task is."""


class ExplodingValue:
    """A header value whose encoding raises, so an exchange ends in the middle of its request."""

    def encode(self, encoding: str) -> bytes:
        raise SimulatedTimeLimitError


def test_an_exchange_ended_by_any_exception_leaves_no_half_used_connection(
    proxied: tuple[TcpProxy, JsonApi],
) -> None:
    proxy, json = proxied
    json.get(CONFIGMAPS)
    json.api.default_headers["X-Interrupted"] = ExplodingValue()
    with pytest.raises(SimulatedTimeLimitError):
        json.get(CONFIGMAPS)  # ends with the request begun on the connection, not sent
    del json.api.default_headers["X-Interrupted"]
    created = json.create(CONFIGMAPS, configmap())  # never resent: it needs a clean connection
    assert created["data"] == {"a": "b"}
    assert proxy.accepted == 2


def test_a_forked_process_makes_its_own_connection(proxied: tuple[TcpProxy, JsonApi]) -> None:
    proxy, json = proxied
    json.get(CONFIGMAPS)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit code
        try:
            json.get(CONFIGMAPS)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    json.get(CONFIGMAPS)
    assert proxy.accepted == 2, "the child's own connection; the parent still uses its one"


def test_a_client_with_a_proxy_keeps_urllib3s_pool() -> None:
    configuration = client.Configuration()
    configuration.host = "http://127.0.0.1:1"
    direct = client.ApiClient(configuration)
    proxied_configuration = client.Configuration()
    proxied_configuration.host = "http://127.0.0.1:1"
    proxied_configuration.proxy = "http://127.0.0.1:2"
    through_proxy = client.ApiClient(proxied_configuration)
    try:
        assert kept_connections(direct) is not None
        assert kept_connections(through_proxy) is None
    finally:
        close_client(direct)
        close_client(through_proxy)
