"""The engine's cache of clients for endpoints that come and go at runtime."""

from __future__ import annotations

import pytest
from kubernetes.client import ApiClient, Configuration

from syncflow.kube.jsonapi import JsonApi
from syncflow.sync.endpoints import ClientBuilder, ClientCache, EndpointError


class Source:
    """Endpoint configurations by name, as a mode would read them from API objects."""

    def __init__(self) -> None:
        self.configs: dict[str, str] = {}
        self.loads = 0
        self.builds = 0

    def load(self, endpoint: str) -> tuple[str, ClientBuilder]:
        self.loads += 1
        if endpoint not in self.configs:
            raise EndpointError(f"no endpoint {endpoint}", "NotFound")
        url = self.configs[endpoint]

        def build() -> JsonApi:
            self.builds += 1
            configuration = Configuration()
            configuration.host = url
            return JsonApi(ApiClient(configuration))

        return url, build


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_client_is_built_once_per_configuration_and_rechecked_after_the_period() -> None:
    source, clock = Source(), Clock()
    source.configs["cluster:east"] = "http://east:1"
    cache = ClientCache(source.load, recheck=5.0, clock=clock)
    first = cache.get("cluster:east")
    assert cache.get("cluster:east") is first and source.loads == 1
    clock.now = 6.0
    assert cache.get("cluster:east") is first and source.loads == 2 and source.builds == 1
    source.configs["cluster:east"] = "http://east:2"
    assert cache.get("cluster:east") is first  # within the recheck period the old client is used
    rebuilt = cache.get("cluster:east", fresh=True)
    assert rebuilt is not first and rebuilt.host == "http://east:2" and source.builds == 2


def test_an_endpoint_that_goes_away_raises_and_is_forgotten() -> None:
    source = Source()
    source.configs["cluster:west"] = "http://west"
    cache = ClientCache(source.load, recheck=0.0)
    cache.get("cluster:west")
    del source.configs["cluster:west"]
    with pytest.raises(EndpointError) as raised:
        cache.get("cluster:west")
    assert raised.value.reason == "NotFound"
    source.configs["cluster:west"] = "http://west"
    cache.get("cluster:west")
    assert source.builds == 2


def test_the_cache_is_bounded() -> None:
    source = Source()
    for index in range(5):
        source.configs[f"cluster:{index}"] = f"http://c{index}"
    cache = ClientCache(source.load, limit=3)
    for index in range(5):
        cache.get(f"cluster:{index}")
    cache.get("cluster:4")
    assert source.builds == 5
    cache.get("cluster:0")  # evicted: built again
    assert source.builds == 6
