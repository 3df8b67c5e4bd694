"""Publish mode's endpoints (``syncflow.modes.publish.clients``): the logical clusters of one
virtual workspace URL share one client, so a worker keeps one connection per URL, not per cluster."""

from __future__ import annotations

from kubernetes import client

from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.publish.clients import PublishEndpoints
from syncflow.modes.publish.endpoint import ExportEndpoint
from syncflow.modes.publish.rules import KCP, SERVICE

URLS = (
    "https://kcp.example:6443/services/apiexport/abc/export",
    "https://shard-2.example:6443/services/apiexport/abc/export",
)


def _endpoints() -> PublishEndpoints:
    configuration = client.Configuration()
    configuration.host = "https://kcp.example:6443/clusters/root"
    service = JsonApi(client.ApiClient(client.Configuration()))
    endpoint = ExportEndpoint("slice", "export", "cluster", "root:org", URLS)
    return PublishEndpoints(client.ApiClient(configuration), service, "root:org:slice", endpoint=endpoint)


def test_the_clusters_of_one_url_share_its_client() -> None:
    endpoints = _endpoints()
    first, second = endpoints.api(KCP, "one"), endpoints.api(KCP, "two")

    assert first.api is second.api
    assert (first.host, second.host) == (f"{URLS[0]}/clusters/one", f"{URLS[0]}/clusters/two")
    assert first.endpoint == KCP


def test_everywhere_is_the_wildcard_cluster_of_each_url() -> None:
    endpoints = _endpoints()
    everywhere = endpoints.everywhere(KCP)

    assert [api.host for api in everywhere] == [f"{url}/clusters/*" for url in URLS]
    assert everywhere[0].api is endpoints.api(KCP, "one").api
    assert everywhere[1].api is not everywhere[0].api
    assert endpoints.everywhere(SERVICE) == [endpoints.service]


def test_a_url_gone_from_the_slice_has_its_client_forgotten() -> None:
    endpoints = _endpoints()
    kept = endpoints.everywhere(KCP)[1].api
    moved = ExportEndpoint("slice", "export", "cluster", "root:org", (URLS[1], "https://shard-3.example/vw"))
    endpoints.endpoint = moved

    assert [api.host for api in endpoints.everywhere(KCP)] == [f"{url}/clusters/*" for url in moved.urls]
    assert endpoints.api(KCP, "one").api is kept
    assert sorted(endpoints._clients) == sorted(moved.urls)
