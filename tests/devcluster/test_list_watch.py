"""Points 8 and 9: list with selectors and pagination; watch with resume, bookmarks, 410 and timeouts."""

from __future__ import annotations

import http.client
import json
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from syncflow.kube.jsonapi import JsonApi
from tests.support.devcluster import DevclusterProcess, start_devcluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process


def _cm(name: str, labels: dict[str, str] | None = None) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels))


@pytest.fixture
def labelled(api_client: client.ApiClient, namespace: str) -> client.CoreV1Api:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _cm("a", {"env": "prod", "tier": "web"}))
    core.create_namespaced_config_map(namespace, _cm("b", {"env": "dev", "tier": "web"}))
    core.create_namespaced_config_map(namespace, _cm("c", {"env": "test"}))
    core.create_namespaced_config_map(namespace, _cm("d"))
    return core


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("env=prod", ["a"]),
        ("env==prod", ["a"]),
        ("env!=prod", ["b", "c", "d", "kube-root-ca.crt"]),
        ("env in (prod,dev)", ["a", "b"]),
        ("env notin (prod,dev)", ["c", "d", "kube-root-ca.crt"]),
        ("tier", ["a", "b"]),
        ("!tier", ["c", "d", "kube-root-ca.crt"]),
        ("tier=web,env!=dev", ["a"]),
    ],
)
def test_label_selectors(
    labelled: client.CoreV1Api, namespace: str, selector: str, expected: list[str]
) -> None:
    found = labelled.list_namespaced_config_map(namespace, label_selector=selector).items
    assert [c.metadata.name for c in found] == expected


def test_field_selectors_and_cross_namespace_list(labelled: client.CoreV1Api, namespace: str) -> None:
    by_name = labelled.list_namespaced_config_map(namespace, field_selector="metadata.name=b").items
    assert [c.metadata.name for c in by_name] == ["b"]
    everywhere = labelled.list_config_map_for_all_namespaces(field_selector=f"metadata.namespace={namespace}")
    assert sorted(c.metadata.name for c in everywhere.items) == ["a", "b", "c", "d", "kube-root-ca.crt"]
    with pytest.raises(ApiException) as bad:
        labelled.list_namespaced_config_map(namespace, field_selector="data.x=1")
    assert bad.value.status == 400 and "field label not supported" in bad.value.body


def test_bad_label_selector_is_400(labelled: client.CoreV1Api, namespace: str) -> None:
    with pytest.raises(ApiException) as bad:
        labelled.list_namespaced_config_map(namespace, label_selector="env in prod")
    assert bad.value.status == 400


def test_pagination_with_limit_and_continue(labelled: client.CoreV1Api, namespace: str) -> None:
    first = labelled.list_namespaced_config_map(namespace, limit=3)
    assert [c.metadata.name for c in first.items] == ["a", "b", "c"]
    assert first.metadata.remaining_item_count == 2 and first.metadata._continue
    rest = labelled.list_namespaced_config_map(namespace, limit=3, _continue=first.metadata._continue)
    assert [c.metadata.name for c in rest.items] == ["d", "kube-root-ca.crt"] and not rest.metadata._continue
    assert int(first.metadata.resource_version) > 0


def test_paged_list_with_a_selector_tells_no_remaining_count(
    labelled: client.CoreV1Api, namespace: str
) -> None:
    # as kube-apiserver: the rest of a filtered list is unknown until it is read
    first = labelled.list_namespaced_config_map(namespace, limit=1, label_selector="tier")
    assert [c.metadata.name for c in first.items] == ["a"]
    assert first.metadata._continue and first.metadata.remaining_item_count is None
    rest = labelled.list_namespaced_config_map(
        namespace, limit=1, label_selector="tier", _continue=first.metadata._continue
    )
    assert [c.metadata.name for c in rest.items] == ["b"] and not rest.metadata._continue


def test_a_metadata_list_holds_each_objects_metadata_only(
    labelled: client.CoreV1Api, api_client: client.ApiClient, namespace: str
) -> None:
    """``Accept: ...;as=PartialObjectMetadataList`` (what a pass that reads no object's content asks
    for): the same page of the same objects, their metadata without their data."""
    api, path = JsonApi(api_client), f"/api/v1/namespaces/{namespace}/configmaps"
    labelled.patch_namespaced_config_map("a", namespace, {"data": {"big": "x" * 1000}})
    whole = api.get(path, limit="2", labelSelector="tier")
    partial = api.get_metadata(path, limit="2", labelSelector="tier")
    assert partial["kind"] == "PartialObjectMetadataList" and partial["apiVersion"] == "meta.k8s.io/v1"
    assert partial["items"] == [
        {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": item["metadata"]}
        for item in whole["items"]
    ]
    assert [i["metadata"]["name"] for i in partial["items"]] == ["a", "b"]
    assert partial["metadata"]["resourceVersion"] == whole["metadata"]["resourceVersion"]


def test_watch_resumes_from_resource_version(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, _cm("w1"))
    core.patch_namespaced_config_map("w1", namespace, {"data": {"k": "v"}})
    core.delete_namespaced_config_map("w1", namespace)
    events = [
        (e["type"], e["object"].metadata.name)
        for e in watch.Watch().stream(
            core.list_namespaced_config_map, namespace, resource_version=start, timeout_seconds=1
        )
    ]
    assert events == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]


def test_watch_without_resource_version_starts_with_current_state(
    labelled: client.CoreV1Api, namespace: str
) -> None:
    for rv in (None, "0"):
        kwargs = {"resource_version": rv} if rv else {}
        events = list(
            watch.Watch().stream(
                labelled.list_namespaced_config_map,
                namespace,
                timeout_seconds=1,
                label_selector="env",
                **kwargs,
            )
        )
        assert sorted((e["type"], e["object"].metadata.name) for e in events) == [
            ("ADDED", "a"),
            ("ADDED", "b"),
            ("ADDED", "c"),
        ]


def test_watch_selector_transitions(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, _cm("x", {"pick": "no"}))
    core.patch_namespaced_config_map("x", namespace, {"metadata": {"labels": {"pick": "yes"}}})
    core.patch_namespaced_config_map("x", namespace, {"metadata": {"labels": {"pick": "no"}}})
    events = [
        e["type"]
        for e in watch.Watch().stream(
            core.list_namespaced_config_map,
            namespace,
            resource_version=start,
            label_selector="pick=yes",
            timeout_seconds=1,
        )
    ]
    assert events == ["ADDED", "DELETED"]


def test_watch_delivers_live_events(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    seen: list[str] = []
    stream = watch.Watch()

    def consume() -> None:
        for event in stream.stream(
            core.list_namespaced_config_map, namespace, resource_version=start, timeout_seconds=10
        ):
            seen.append(event["object"].metadata.name)
            stream.stop()

    thread = threading.Thread(target=consume)
    thread.start()
    core.create_namespaced_config_map(namespace, _cm("live"))
    thread.join(timeout=10)
    assert seen == ["live"]


def test_bookmarks_when_allowed(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    types = []
    for event in watch.Watch().stream(
        core.list_namespaced_config_map,
        namespace,
        resource_version=start,
        allow_watch_bookmarks=True,
        timeout_seconds=2,
    ):
        types.append(event["type"])
        if event["type"] == "BOOKMARK":
            assert int(event["raw_object"]["metadata"]["resourceVersion"]) >= int(start)
            break
    assert types == ["BOOKMARK"]


def _raw_watch(devcluster: DevclusterProcess, path: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(devcluster.url + path, timeout=10) as response:
        return [json.loads(line) for line in response.read().splitlines() if line.strip()]


def test_a_resumed_watch_sends_the_events_it_missed_together(
    api_client: client.ApiClient, namespace: str, devcluster: DevclusterProcess
) -> None:
    """As kube-apiserver writes the events that wait for a watch before it flushes, the events since
    the resourceVersion a watch resumes from come in one chunk of the response (small ones), which a
    client reads at once."""
    core = client.CoreV1Api(api_client)
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    for name in ("a", "b", "c"):
        core.create_namespaced_config_map(namespace, _cm(name))
    host, port = devcluster.url.removeprefix("http://").split(":")
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&resourceVersion={start}"
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        first_chunk = response.read1()  # a chunked response's read1 returns one chunk
        names = [json.loads(line)["object"]["metadata"]["name"] for line in first_chunk.splitlines()]
        assert names == ["a", "b", "c"]
    finally:
        connection.close()


def test_too_old_resource_version_is_410(
    api_client: client.ApiClient, namespace: str, devcluster: DevclusterProcess
) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _cm("churn"))
    for i in range(520):  # the session devcluster keeps 500 events
        core.patch_namespaced_config_map("churn", namespace, {"data": {"i": str(i)}})
    events = _raw_watch(devcluster, f"/api/v1/namespaces/{namespace}/configmaps?watch=1&resourceVersion=2")
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410 and events[0]["object"]["reason"] == "Expired"
    with pytest.raises(ApiException) as gone:
        list(
            watch.Watch().stream(
                core.list_namespaced_config_map, namespace, resource_version="2", timeout_seconds=1
            )
        )
    assert gone.value.status == 410


def test_watch_timeout_ends_the_stream(devcluster: DevclusterProcess, namespace: str) -> None:
    events = _raw_watch(devcluster, f"/api/v1/namespaces/{namespace}/configmaps?watch=true&timeoutSeconds=1")
    # the stream ends after the initial state: the namespace's kube-root-ca.crt, nothing else
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "kube-root-ca.crt")]


def _open_watches(server: DevclusterProcess) -> int:
    with urllib.request.urlopen(server.url + "/debug/watches", timeout=10) as response:
        return int(json.loads(response.read())["open"])


def test_a_watch_ends_when_its_client_hangs_up(tmp_path: Path) -> None:
    """As kube-apiserver ends a watch when its client goes away, devcluster ends the stream at the next
    event, though nothing it sends matches the selector: a hung-up watch costs no work per event."""
    server = start_devcluster(tmp_path, "--no-simulate")
    try:
        host, port = server.url.removeprefix("http://").split(":")
        path = "/api/v1/namespaces/default/configmaps?watch=1&labelSelector=no%3Dmatch&timeoutSeconds=300"
        kept, dropped = (http.client.HTTPConnection(host, int(port)) for _ in range(2))
        for connection in (kept, dropped):
            connection.request("GET", path)
            assert connection.getresponse().status == 200
        wait_for(lambda: _open_watches(server) == 2, what="both watch streams open")
        dropped.close()
        core = client.CoreV1Api(config.new_client_from_config(config_file=str(server.kubeconfig)))
        core.create_namespaced_config_map("default", _cm("wake"))
        wait_for(lambda: _open_watches(server) == 1, what="the hung-up watch to end, the other to stay")
        kept.close()
    finally:
        server.stop()


def test_a_watch_that_falls_a_window_behind_is_ended_and_resumes_without_a_gap(tmp_path: Path) -> None:
    """A client that stops reading is not buffered for without end: once ``--watch-history`` events
    wait for it, its stream ends after them (as kube-apiserver ends an unresponsive watcher), and a
    resume from the last resourceVersion it got delivers the rest, none lost or repeated."""
    server = start_devcluster(tmp_path, "--no-simulate", "--watch-history", "20")
    try:
        host, port = server.url.removeprefix("http://").split(":")
        path = "/api/v1/namespaces/default/configmaps"
        core = client.CoreV1Api(config.new_client_from_config(config_file=str(server.kubeconfig)))
        start = core.list_namespaced_config_map("default").metadata.resource_version
        stalled = http.client.HTTPConnection(host, int(port), timeout=30)
        stalled.request("GET", f"{path}?watch=1&resourceVersion={start}&timeoutSeconds=300")
        stream = stalled.getresponse()
        assert stream.status == 200
        wait_for(lambda: _open_watches(server) == 1, what="the watch stream open")
        payload = {"blob": "x" * 512 * 1024}  # the socket buffers fill after a few of these
        created: list[str] = []
        while _open_watches(server) and len(created) < 200:
            created.append(f"big-{len(created)}")
            core.create_namespaced_config_map(
                "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=created[-1]), data=payload)
            )
        assert _open_watches(server) == 0, f"the stalled watch still open after {len(created)} creates"

        delivered = [json.loads(line) for line in stream.read().splitlines() if line.strip()]
        stalled.close()
        assert {e["type"] for e in delivered} == {"ADDED"} and 20 <= len(delivered) < len(created)
        last = delivered[-1]["object"]["metadata"]["resourceVersion"]
        resumed = _raw_watch(server, f"{path}?watch=1&resourceVersion={last}&timeoutSeconds=1")
        names = [e["object"]["metadata"]["name"] for e in delivered + resumed]
        assert names == created
    finally:
        server.stop()
