"""The engine's ownership rules: whose a target object is, and which system objects no rule may touch."""

from __future__ import annotations

from typing import Any

import pytest

from syncflow.sync import metadata as md
from syncflow.sync.desired import remote_annotations, remote_labels
from syncflow.sync.ownership import (
    COLLISION,
    FOREIGN,
    PROTECTED,
    Owner,
    Reach,
    collision,
    foreign,
    owner_of,
    protected,
)
from syncflow.sync.rule import Resource

CONFIGMAPS = Resource(group="", version="v1", plural="configmaps", kind="ConfigMap", namespaced=True)
NAMESPACES = Resource(group="", version="v1", plural="namespaces", kind="Namespace", namespaced=False)
ROLES = Resource(
    group="rbac.authorization.k8s.io",
    version="v1",
    plural="clusterroles",
    kind="ClusterRole",
    namespaced=False,
)


def target(labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "x", "namespace": "ns", "labels": labels or {}, "annotations": annotations or {}}
    }


def copy_of(cluster: str, namespace: str, name: str, agent: str) -> dict[str, Any]:
    return target(remote_labels(cluster, namespace, name, agent), remote_annotations(namespace, name, None))


@pytest.mark.parametrize(
    ("obj", "owner"),
    [
        (copy_of("ws1", "ns", "x", "me"), Owner.THIS_COPY),
        (copy_of("ws1", "ns", "x", "other-agent"), Owner.OTHER_COPY),
        (copy_of("ws2", "ns", "x", "me"), Owner.OTHER_COPY),
        (copy_of("ws1", "ns", "y", "me"), Owner.OTHER_COPY),
        (target({md.AGENT_LABEL: "me"}), Owner.AGENT),
        (target({md.AGENT_LABEL: "other-agent"}), Owner.OTHER_COPY),
        (target({"app": "kube-proxy"}), Owner.FOREIGN),
        ({"metadata": {"name": "x"}}, Owner.FOREIGN),
    ],
    ids=[
        "this-copy",
        "another-agents-copy",
        "another-workspaces-copy",
        "another-objects-copy",
        "agent-made",
        "another-agents-object",
        "foreign",
        "no-labels",
    ],
)
def test_owner_of_a_target_object(obj: dict[str, Any], owner: Owner) -> None:
    assert owner_of(obj, "me", "ws1", "ns", "x") is owner


def test_system_objects_are_protected_unless_their_namespace_is_opened() -> None:
    closed, opened = Reach(), Reach(frozenset({"kube-system"}))
    for namespace in ("kube-system", "kube-public", "kube-node-lease"):
        assert closed.protects(CONFIGMAPS, namespace, "c")
    assert not closed.protects(CONFIGMAPS, "default", "c") and not closed.protects(CONFIGMAPS, "kube-x", "c")
    assert not opened.protects(CONFIGMAPS, "kube-system", "c") and opened.protects(
        CONFIGMAPS, "kube-public", "c"
    )
    for name in ("default", "kube-system", "kube-public", "kube-anything"):
        assert closed.protects(NAMESPACES, "", name) and opened.protects(NAMESPACES, "", name)
    assert not closed.protects(NAMESPACES, "", "team-a")
    assert not closed.protects(ROLES, "", "kube-proxy")  # cluster-scoped, not a Namespace: ownership decides


def test_refusals_tell_the_source_owner_nothing_of_other_objects() -> None:
    refused = collision("ConfigMap", "ns", "x", "tenant-b-cluster/secret-ns/secret-name")
    assert refused.cause == COLLISION and refused.event_reason == "NameCollision"
    assert "tenant-b-cluster" in str(refused)  # the operator sees whose copy it is
    for secret in ("tenant-b-cluster", "secret-ns", "secret-name"):
        assert secret not in refused.event_message
    assert foreign("ConfigMap", "ns", "x").cause == FOREIGN
    assert "was not created by syncflow" in foreign("ConfigMap", "ns", "x").event_message
    assert protected("ConfigMap", "kube-system", "x").cause == PROTECTED
    assert "--allow-system-namespace" in str(protected("ConfigMap", "kube-system", "x"))
    assert "system namespace" in protected("Namespace", "", "default").event_message
