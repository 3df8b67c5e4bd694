"""Which EdgeSyncConfigs make edge mode's rules: an invalid edit never deselects what a config selected,
and a config being deleted no longer counts."""

from __future__ import annotations

from typing import Any

import pytest

from syncflow.modes.edge.rules import ConfigOnHold, EdgeRules, Mailbox


class ConfigList:
    """The mailbox workspace's EdgeSyncConfigs, as a LIST answers them."""

    def __init__(self, *configs: dict[str, Any]) -> None:
        self.items = list(configs)

    def get(self, path: str, **query: str) -> dict[str, Any]:
        return {"items": self.items}


def config(name: str, namespace: str, **meta: Any) -> dict[str, Any]:
    selector = {"version": "v1", "kind": "ConfigMap", "namespace": namespace}
    return {
        "apiVersion": "edge.kcp.io/v1alpha1",
        "kind": "EdgeSyncConfig",
        "metadata": {"name": name, "uid": f"uid-{name}", **meta},
        "spec": {"downSyncedResources": [selector]},
    }


def rules(mailbox: ConfigList) -> EdgeRules:
    return EdgeRules(mailbox, mailbox, Mailbox("mb", "pc1"), "pc1", "default")  # type: ignore[arg-type]


def namespaces(found: list[Any]) -> list[str]:
    return [s.namespace for c in found for s in c.spec.down_synced_resources or []]


def test_an_invalid_edit_keeps_the_last_valid_spec_until_fixed() -> None:
    mailbox = ConfigList(config("app", "shop"))
    edge = rules(mailbox)
    assert namespaces(edge.configs()) == ["shop"]
    broken = config("app", "")
    broken["spec"]["downSyncedResources"][0]["version"] = ""  # invalid: what it selected stays selected
    mailbox.items = [broken]
    assert namespaces(edge.configs()) == ["shop"]
    mailbox.items = [config("app", "cafe")]
    assert namespaces(edge.configs()) == ["cafe"]


def test_an_invalid_config_without_a_known_valid_spec_holds_every_rule() -> None:
    broken = config("app", "shop")
    broken["spec"]["downSyncedResources"][0]["kind"] = ""
    with pytest.raises(ConfigOnHold, match="EdgeSyncConfig app is invalid"):
        rules(ConfigList(broken)).configs()  # e.g. a syncer started while the config is broken


def test_a_config_being_deleted_no_longer_counts() -> None:
    going = config("old", "legacy", deletionTimestamp="2026-11-28T00:00:00Z")
    assert namespaces(rules(ConfigList(config("app", "shop"), going)).configs()) == ["shop"]
