"""A fixed pair of endpoints (workload and edge mode): each name gives its one client."""

from __future__ import annotations

import pytest
from kubernetes.client import ApiClient

from syncflow.kube.jsonapi import JsonApi
from syncflow.sync.endpoints import EndpointPair


def test_each_name_gives_its_client_whatever_the_logical_cluster() -> None:
    workspace, cluster = JsonApi(ApiClient()), JsonApi(ApiClient())
    pair = EndpointPair("kcp", workspace, "pcluster", cluster)
    assert pair.api("kcp", "root:any") is workspace
    assert pair.api("pcluster", "") is cluster
    assert pair.everywhere("kcp") == [workspace]
    with pytest.raises(ValueError, match="'service'"):
        pair.api("service", "")
