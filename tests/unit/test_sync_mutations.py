"""Mutations applied by the engine's pure parts: a PublishedResource's ``spec.mutation`` becomes a rule
transform; spec steps shape both the copy and the last-applied state, status steps the status that
goes back. Each kind end to end, as the reconciler chains these functions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from syncflow.api.publishedresource import PublishedResource
from syncflow.modes.publish.rules import mutate_of
from syncflow.mutation.base import MutationError
from syncflow.sync.desired import build_desired, managed_content, preview
from syncflow.sync.merge import three_way_patch
from syncflow.sync.registry import RuleEntry
from syncflow.sync.rule import Mutate, Resource, Side, SyncRule, Transform
from syncflow.sync.transforms import apply, mutate_status

CERTS = Resource(
    group="cert-manager.io", version="v1", plural="certificates", kind="Certificate", namespaced=True
)

KCP_OBJECT: dict[str, Any] = {
    "apiVersion": "certs.example.com/v1",
    "kind": "Certificate",
    "metadata": {"name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "7"},
    "spec": {"secretName": "web-tls", "internal": {"ref": "x"}, "size": 3, "owner": "team-a"},
    "status": {"phase": "Pending"},
}


def transforms(
    spec: tuple[dict[str, Any], ...] = (), status: tuple[dict[str, Any], ...] = ()
) -> tuple[Transform, ...]:
    published = PublishedResource.parse(
        {
            "apiVersion": "syncagent.kcp.io/v1alpha1",
            "kind": "PublishedResource",
            "metadata": {"name": "certs"},
            "spec": {
                "resource": {"apiGroup": "cert-manager.io", "kind": "Certificate"},
                "mutation": {"spec": list(spec), "status": list(status)},
            },
        }
    )
    return mutate_of(published.spec.mutation)


def copy_and_state(
    rule_transforms: tuple[Transform, ...], other: dict[str, Any] | None = None
) -> tuple[Any, Any]:
    """What the reconciler builds: the local copy and the state it records, from the mutated kcp object."""
    other = other or preview(
        KCP_OBJECT, api_version=CERTS.api_version, kind=CERTS.kind, namespace="ns", name="c1"
    )
    source = apply(rule_transforms, KCP_OBJECT, other)
    copy = build_desired(
        source,
        local_api_version=CERTS.api_version,
        local_kind=CERTS.kind,
        local_namespace="ns",
        local_name="c1",
        cluster="ws1",
        workspace_path=None,
        agent="agent",
    )
    return copy, managed_content(source)


@pytest.mark.parametrize(
    ("step", "want_spec"),
    [
        ({"delete": {"path": "spec.internal"}}, {"secretName": "web-tls", "size": 3, "owner": "team-a"}),
        (
            {"regex": {"path": "spec.secretName", "pattern": "(.+)", "replacement": "cert-$1"}},
            {"secretName": "cert-web-tls", "internal": {"ref": "x"}, "size": 3, "owner": "team-a"},
        ),
        (
            {
                "template": {
                    "path": "spec.owner",
                    "template": "{{ .Value.String }}@{{ .RemoteObject.metadata.name }}",
                }
            },
            {"secretName": "web-tls", "internal": {"ref": "x"}, "size": 3, "owner": "team-a@c1"},
        ),
        (
            {"cel": {"path": "spec.size", "expression": "self.spec.size * 2"}},
            {"secretName": "web-tls", "internal": {"ref": "x"}, "size": 6, "owner": "team-a"},
        ),
    ],
)
def test_each_spec_mutation_shapes_the_copy_and_the_recorded_state(
    step: dict[str, Any], want_spec: dict[str, Any]
) -> None:
    copy, state = copy_and_state(transforms(spec=(step,)))
    assert copy["spec"] == want_spec
    assert state["spec"] == want_spec  # what the state Secret remembers is the mutated object
    assert "status" not in copy and "status" not in state
    assert KCP_OBJECT["spec"]["secretName"] == "web-tls"  # the kcp object itself is left alone
    # the next sync of an unchanged kcp object patches nothing: the mutation is stable
    assert three_way_patch(state, copy, copy) is None


def test_a_template_reads_the_existing_copy_when_there_is_one() -> None:
    rule_transforms = transforms(
        spec=({"template": {"path": "spec.owner", "template": "{{ .RemoteObject.spec.owner }}"}},)
    )
    existing = {"metadata": {"name": "c1"}, "spec": {"owner": "set-locally"}}
    copy, _ = copy_and_state(rule_transforms, existing)
    assert copy["spec"]["owner"] == "set-locally"


def test_a_changed_mutation_result_patches_only_what_changed() -> None:
    before, state = copy_and_state(
        transforms(spec=({"regex": {"path": "spec.secretName", "pattern": "", "replacement": "a"}},))
    )
    after, _ = copy_and_state(
        transforms(spec=({"regex": {"path": "spec.secretName", "pattern": "", "replacement": "b"}},))
    )
    live = {**before, "spec": {**before["spec"], "localOnly": True}}
    assert three_way_patch(state, after, live) == {"spec": {"secretName": "b"}}


@pytest.mark.parametrize(
    ("step", "want_status"),
    [
        ({"delete": {"path": "status.internalRef"}}, {"phase": "Ready"}),
        (
            {"regex": {"path": "status.phase", "pattern": "^Re", "replacement": "Al"}},
            {"phase": "Alady", "internalRef": "r"},
        ),
        (
            {"template": {"path": "status.owner", "template": "{{ .RemoteObject.spec.owner }}"}},
            {"phase": "Ready", "internalRef": "r", "owner": "team-a"},
        ),
        (
            {"cel": {"path": "status.ready", "expression": "self.status.phase == 'Ready'"}},
            {"phase": "Ready", "internalRef": "r", "ready": True},
        ),
    ],
)
def test_each_status_mutation_shapes_the_status_that_returns(
    step: dict[str, Any], want_status: dict[str, Any]
) -> None:
    rule_transforms = transforms(status=(step,))
    local = {"metadata": {"name": "c1"}, "spec": {}, "status": {"phase": "Ready", "internalRef": "r"}}
    mutated_source = apply(rule_transforms, KCP_OBJECT, local)
    assert mutate_status(rule_transforms, local, mutated_source)["status"] == want_status
    assert local["status"] == {"phase": "Ready", "internalRef": "r"}  # the copy itself is left alone


def test_a_failing_mutation_names_its_step() -> None:
    rule_transforms = transforms(
        spec=({"delete": {"path": "spec.x"}}, {"cel": {"path": "spec.size", "expression": "self.spec.nope"}})
    )
    with pytest.raises(MutationError, match=r"^mutation.spec\[1\]: failed to evaluate CEL expression"):
        apply(rule_transforms, KCP_OBJECT)
    with pytest.raises(MutationError, match=r"^mutation.status\[0\]: failed to evaluate CEL expression"):
        mutate_status(
            transforms(status=({"cel": {"path": "status.x", "expression": "self.nope"}},)),
            {"status": {}},
            KCP_OBJECT,
        )


def test_no_mutation_means_no_transform_and_rules_carry_mutations_as_data() -> None:
    assert transforms() == ()
    mutate = transforms(
        spec=({"delete": {"path": "spec.internal"}},), status=({"delete": {"path": "status.x"}},)
    )
    assert mutate == (
        Mutate(spec=({"delete": {"path": "spec.internal"}},), status=({"delete": {"path": "status.x"}},)),
    )
    rule = SyncRule(
        name="certs",
        agent="agent",
        source=Side(endpoint="kcp", resource=CERTS),
        target=Side(endpoint="service", resource=CERTS),
        transforms=mutate,
    )
    # the registry stores rules as JSON; a worker reads back the same rule
    entry = RuleEntry.model_validate(json.loads(RuleEntry.ready(rule).model_dump_json()))
    assert entry.rule == rule
