"""Clients per endpoint: kubeconfig loading with clear errors, and kcp cluster/URL retargeting."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from prometheus_client import REGISTRY

from syncflow.kube.clients import KubeconfigError, for_cluster, for_url, load_client
from syncflow.kube.jsonapi import JsonApi, decode, encode
from syncflow.kube.transport import TRANSPORT_ERRORS
from tests.kube.conftest import close_client
from tests.support.devcluster import DevclusterProcess, start_devcluster


def test_load_client_talks_to_the_kubeconfig_server_without_touching_the_global_default(
    devcluster: DevclusterProcess,
) -> None:
    before = client.Configuration.get_default_copy().host
    api = load_client(str(devcluster.kubeconfig))
    try:
        assert api.configuration.host == devcluster.url
        assert JsonApi(api).get("/api/v1/namespaces/default")["metadata"]["name"] == "default"
        assert client.Configuration.get_default_copy().host == before
        assert load_client(str(devcluster.kubeconfig)) is not api
    finally:
        close_client(api)


@pytest.mark.parametrize("content", [None, "{{{ not yaml", "apiVersion: v1\nkind: Config\ncontexts: []\n"])
def test_load_client_names_a_missing_or_invalid_kubeconfig(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "kubeconfig"
    if content is not None:
        path.write_text(content)
    with pytest.raises(KubeconfigError, match=str(path)):
        load_client(str(path))


@pytest.mark.parametrize(
    ("host", "cluster", "expected"),
    [
        ("https://kcp:6443", "root:org", "https://kcp:6443/clusters/root:org"),
        ("https://kcp:6443/clusters/root", "abc123", "https://kcp:6443/clusters/abc123"),
        ("https://kcp:6443/clusters/root:org/", "root", "https://kcp:6443/clusters/root"),
        (
            "https://vw/services/apiexport/lc/export/clusters/*",
            "lc2",
            "https://vw/services/apiexport/lc/export/clusters/lc2",
        ),
    ],
)
def test_for_cluster_replaces_or_appends_the_cluster_suffix(host: str, cluster: str, expected: str) -> None:
    configuration = client.Configuration(host=host, api_key={"BearerToken": "t"})
    base = client.ApiClient(configuration)
    retargeted = for_cluster(base, cluster)
    assert retargeted.configuration.host == expected
    assert retargeted.configuration.api_key == {"BearerToken": "t"}
    assert base.configuration.host == host, "the original client is unchanged"


def test_for_url_keeps_credentials_and_ca() -> None:
    configuration = client.Configuration(
        host="https://a", api_key={"BearerToken": "t"}, ssl_ca_cert="/ca.pem"
    )
    copied = for_url(client.ApiClient(configuration), "https://vw/services/apiexport/lc/e/clusters/*")
    assert copied.configuration.host == "https://vw/services/apiexport/lc/e/clusters/*"
    assert (copied.configuration.api_key, copied.configuration.ssl_ca_cert) == (
        {"BearerToken": "t"},
        "/ca.pem",
    )


def test_for_cluster_rejects_a_slash() -> None:
    with pytest.raises(ValueError, match="logical cluster"):
        for_cluster(client.ApiClient(client.Configuration(host="https://kcp")), "a/b")


def test_a_retargeted_client_of_a_token_kubeconfig_keeps_its_url(tmp_path: Path) -> None:
    """The kubeconfig loader re-applies the whole kubeconfig (server too) before each token request."""
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: kcp\n"
        "clusters: [{name: kcp, cluster: {server: 'https://kcp:6443/clusters/root'}}]\n"
        "contexts: [{name: kcp, context: {cluster: kcp, user: me}}]\n"
        "users: [{name: me, user: {token: s3cret}}]\n"
    )
    retargeted = for_cluster(load_client(str(path)), "root:org")
    for _ in range(2):
        _, url, headers, _, _ = retargeted.param_serialize(
            "GET", "/api/v1/namespaces", header_params={}, auth_settings=["BearerToken"]
        )
        assert url == "https://kcp:6443/clusters/root:org/api/v1/namespaces"
        assert headers["authorization"] == "Bearer s3cret"


def test_answers_decode_as_json_allows_beyond_what_orjson_reads() -> None:
    """orjson reads the common answer (int64 integers stay exact); what it refuses but JSON
    parsers accept still decodes."""
    assert decode(b'{"kind": "Widget", "spec": {"n": 1, "s": "\\u00e9"}}') == {
        "kind": "Widget",
        "spec": {"n": 1, "s": "\u00e9"},
    }
    assert decode(b'{"spec": {"max": 9223372036854775807, "f": 0.5}}') == {
        "spec": {"max": 2**63 - 1, "f": 0.5}
    }
    assert decode(b'{"lone": "\\ud800"}') == {"lone": "\ud800"}
    with pytest.raises(ValueError):
        decode(b"<html>not json</html>")


@pytest.mark.integration
def test_requests_carry_the_kubeconfig_credentials_over_tls_and_their_query(tmp_path: Path) -> None:
    """Requests go straight to the client's pool: the token, the CA and the query still go with them."""
    server = start_devcluster(tmp_path, token="s3cret")
    api = load_client(str(server.kubeconfig))
    try:
        json = JsonApi(api)
        for name, tier in (("a", "web"), ("b", "db"), ("c", "cache")):
            json.create(
                "/api/v1/namespaces/default/configmaps",
                {"metadata": {"name": name, "labels": {"tier": tier}}, "data": {"n": name}},
            )
        listed = json.get("/api/v1/namespaces/default/configmaps", labelSelector="tier in (web, db)")
        assert sorted(item["metadata"]["name"] for item in listed["items"]) == ["a", "b"]
        patched = json.merge_patch("/api/v1/namespaces/default/configmaps/a", {"data": {"n": "é"}})
        assert patched["data"] == {"n": "é"}
        # the kubeconfig loader's hook sets the token again before each request, as the client does
        api.configuration.api_key["BearerToken"] = "Bearer wrong"
        assert json.get("/api/v1/namespaces/default/configmaps/a")["data"] == {"n": "é"}
        api.configuration.refresh_api_key_hook = None
        api.configuration.api_key["BearerToken"] = "Bearer wrong"
        with pytest.raises(ApiException) as denied:
            json.get("/api/v1/namespaces/default/configmaps/a")
        assert denied.value.status == 401 and "Unauthorized" in str(denied.value.body)
    finally:
        close_client(api)
        server.stop()


def test_bodies_encode_with_orjson_or_else_as_the_client_does() -> None:
    api = client.ApiClient()
    try:
        assert encode(api, {"spec": {"n": 1, "s": "é"}}) == '{"spec":{"n":1,"s":"é"}}'.encode()
        assert encode(api, {"spec": {"n": 2**70}}) == b'{"spec": {"n": 1180591620717411303424}}'
    finally:
        close_client(api)


def test_every_request_counts_by_status_method_and_host(
    api: client.ApiClient, devcluster: DevclusterProcess
) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        refused = f"127.0.0.1:{closed.getsockname()[1]}"
    served = urlsplit(devcluster.url).netloc
    counted = [
        ("201", "POST", served),
        ("200", "GET", served),
        ("404", "GET", served),
        ("<error>", "GET", refused),
    ]

    def counts() -> list[float]:
        return [
            REGISTRY.get_sample_value("rest_client_requests_total", {"code": c, "method": m, "host": h})
            or 0.0
            for c, m, h in counted
        ]

    before = counts()
    json = JsonApi(api)
    configmaps = "/api/v1/namespaces/default/configmaps"
    name = f"counted-{uuid.uuid4().hex[:8]}"
    json.create(configmaps, {"metadata": {"name": name}})
    json.get(f"{configmaps}/{name}")
    assert not json.exists(f"{configmaps}/{name}-missing")
    stream = json.send("GET", configmaps, query=[("watch", "1"), ("timeoutSeconds", "1")])
    stream.close()
    with pytest.raises(TRANSPORT_ERRORS):
        JsonApi(for_url(api, f"http://{refused}")).get(configmaps)
    assert [after - was for after, was in zip(counts(), before, strict=True)] == [1, 2, 1, 1]
