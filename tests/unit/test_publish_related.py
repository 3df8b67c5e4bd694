"""Publish mode's ``spec.related`` as the engine's related resources: GVRs (legacy kinds, projections),
kinds and scopes from each side's discovery, locators, watches and mutations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from syncflow.api.publishedresource import PublishedResource
from syncflow.modes.publish.related import RelatedNotServedError, related_resources
from syncflow.sync.rule import Locator, RegexRewrite, RelatedSelector, RelatedWatch, Resource, Rewrite
from tests.support.publishedresources import EXAMPLE

CORE = {
    "resources": [
        {"name": "secrets", "kind": "Secret", "namespaced": True},
        {"name": "configmaps", "kind": "ConfigMap", "namespaced": True},
    ]
}
THINGS = {
    "resources": [
        {"name": "things", "kind": "Thing", "namespaced": True},
        {"name": "things/status", "kind": "Thing"},
    ]
}
LOCAL_THINGS = {"resources": [{"name": "localthings", "kind": "LocalThing", "namespaced": False}]}


def discovery(documents: dict[str, dict[str, Any]]) -> Any:
    def get(path: str) -> dict[str, Any]:
        return documents.get(path, {"resources": []})

    return get


def test_the_example_becomes_three_related_resources() -> None:
    kcp = discovery({"/api/v1": CORE, "/apis/example.com/v1": THINGS})
    service = discovery({"/api/v1": CORE, "/apis/local.example.com/v2": LOCAL_THINGS})
    tls, credentials, legacy = related_resources(PublishedResource.parse(EXAMPLE), kcp, service)

    secrets = Resource(group="", version="v1", plural="secrets", kind="Secret", namespaced=True)
    assert (tls.origin, tls.origin_resource, tls.destination_resource) == ("target", secrets, secrets)
    assert tls.object == Locator(
        reference="spec.secretName", regex=RegexRewrite(pattern="^cert-", replacement="")
    )
    assert tls.cleanup and not tls.sync_status and tls.watch == RelatedWatch(by_owner=True)

    assert credentials.origin == "source"
    assert credentials.origin_resource == Resource(
        group="example.com",
        version="v1",
        plural="things",
        kind="Thing",
        namespaced=True,
        status_subresource=True,
    )
    assert credentials.destination_resource == Resource(
        group="local.example.com", version="v2", plural="localthings", kind="LocalThing", namespaced=False
    )
    assert credentials.object == Locator(
        selector=RelatedSelector(
            match_labels={"owner": "{{ .RemoteObject.metadata.name }}"},
            rewrite=Rewrite(template="{{ .Value }}-copy"),
        )
    )
    assert credentials.namespace == Locator(template="{{ .Object.metadata.namespace }}")
    assert credentials.mutation == ({"delete": {"path": "metadata.labels"}},)
    assert credentials.watch == RelatedWatch(by_selector="app=db") and credentials.sync_status

    configmaps = Resource(group="", version="v1", plural="configmaps", kind="ConfigMap", namespaced=True)
    assert legacy.origin_resource == legacy.destination_resource == configmaps  # kind: ConfigMap
    assert legacy.object.selector is not None and legacy.object.selector.match_labels == {"a": "b"}
    assert legacy.namespace == Locator(reference="metadata.namespace")


def test_match_expressions_become_kube_selector_syntax() -> None:
    manifest = copy.deepcopy(EXAMPLE)
    manifest["spec"]["related"] = [
        {
            "identifier": "x",
            "origin": "service",
            "kind": "Secret",
            "object": {
                "selector": {
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold", "silver"]}],
                    "rewrite": {"regex": {"replacement": "fixed"}},
                }
            },
        }
    ]
    kcp = service = discovery({"/api/v1": CORE})
    (only,) = related_resources(PublishedResource.parse(manifest), kcp, service)
    assert only.object.selector == RelatedSelector(
        match_expressions="tier in (gold,silver)", rewrite=Rewrite(regex=RegexRewrite(replacement="fixed"))
    )


def test_a_resource_not_served_on_one_side_says_which() -> None:
    kcp = discovery({"/api/v1": CORE})  # no claim on things yet: the virtual workspace does not serve them
    service = discovery({"/api/v1": CORE, "/apis/local.example.com/v2": LOCAL_THINGS})
    with pytest.raises(RelatedNotServedError, match=r"things.example.com/v1 is not served on the kcp side"):
        related_resources(PublishedResource.parse(EXAMPLE), kcp, service)
