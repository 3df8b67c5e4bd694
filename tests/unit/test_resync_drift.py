"""A resync's drift check against the last-applied state Secrets: a source object whose managed content
is not what its state stores gets a key, one that matches does not, an unreadable state counts as no
state, and a rule that reverts drift also catches an edited copy."""

from __future__ import annotations

from typing import Any

from syncflow.sync.desired import managed_content
from syncflow.sync.resync import keys_needing_work, last_applied, state_digest
from syncflow.sync.rule import Resource, Side, SyncRule
from syncflow.sync.state import state_key, state_secret
from tests.support.copies import copy_of

WIDGETS = Resource(group="example.com", version="v1", plural="widgets", kind="Widget", namespaced=True)
STATES = "states"


def rule(drift: str = "keep") -> SyncRule:
    return SyncRule.model_validate(
        {
            "name": "widgets",
            "agent": "agent",
            "source": Side(endpoint="kcp", resource=WIDGETS),
            "target": Side(endpoint="service", resource=WIDGETS),
            "state_namespace": STATES,
            "drift": drift,
        }
    )


def source(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": name, "namespace": "default", "annotations": {"kcp.io/cluster": "ws1"}}
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": spec}


def stored(obj: dict[str, Any]) -> dict[str, Any]:
    """The state Secret a sync of ``obj`` leaves."""
    name = obj["metadata"]["name"]
    content = managed_content(obj)
    return state_secret(STATES, "ws1", "example.com/v1", "Widget", "default", name, {_key(name): content})


def _key(name: str) -> str:
    return state_key("ws1", "", "default", name)


class Sides:
    """Both API servers as one: the sources on kcp, the copies and the state Secrets on the service side."""

    def __init__(
        self, sources: list[dict[str, Any]], copies: list[dict[str, Any]], secrets: list[Any]
    ) -> None:
        self.sources, self.copies, self.secrets = sources, copies, secrets

    def api(self, endpoint: str, cluster: str) -> Any:
        sides = self

        class Api:
            def get(self, path: str, **query: str) -> dict[str, Any]:
                if endpoint == "kcp":
                    items = sides.sources
                else:
                    items = sides.secrets if path == f"/api/v1/namespaces/{STATES}/secrets" else sides.copies
                return {"items": items, "metadata": {}}

            get_metadata = get

        return Api()

    def everywhere(self, endpoint: str) -> list[Any]:
        return [self.api(endpoint, "")]


def drifted(rule: SyncRule, sources: list[dict[str, Any]], copies: list[Any], secrets: list[Any]) -> set[str]:
    return {key.name for key in keys_needing_work(rule, Sides(sources, copies, secrets))}


def with_spec(copy: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {**copy, "spec": spec}


def test_a_source_changed_since_its_state_was_stored_gets_a_key_and_one_unchanged_does_not() -> None:
    was, now = source("changed", {"size": 1}), source("changed", {"size": 2})
    same = source("same", {"size": 1})

    keys = drifted(rule(), [now, same], [copy_of("changed"), copy_of("same")], [stored(was), stored(same)])

    assert keys == {"changed"}


def test_an_unreadable_or_missing_state_is_no_drift() -> None:
    broken = stored(source("broken", {"size": 1}))
    broken["data"] = {_key("broken"): "not base64 json!"}
    objects = [source("broken", {"size": 2}), source("stateless", {"size": 2})]

    assert drifted(rule(), objects, [copy_of("broken"), copy_of("stateless")], [broken]) == set()


def test_a_rule_that_reverts_drift_catches_a_copy_edited_away_from_its_state() -> None:
    kept, edited = source("kept", {"size": 1}), source("edited", {"size": 1})
    copies = [with_spec(copy_of("kept"), {"size": 1}), with_spec(copy_of("edited"), {"size": 9})]

    assert drifted(rule("revert"), [kept, edited], copies, [stored(kept), stored(edited)]) == {"edited"}
    assert drifted(rule("keep"), [kept, edited], copies, [stored(kept), stored(edited)]) == set()


def test_a_resync_holds_the_stored_data_only_for_a_rule_that_reverts_drift() -> None:
    content = managed_content(source("w", {"size": 1}))
    secret = stored(source("w", {"size": 1}))

    kept, reverted = last_applied(secret, with_data=False), last_applied(secret, with_data=True)

    assert kept.digests == reverted.digests == {_key("w"): state_digest(content)}
    assert kept.data is None
    assert reverted.data == secret["data"]
