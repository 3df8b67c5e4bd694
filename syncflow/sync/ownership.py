"""Who an object on the target belongs to, and what no rule may ever touch: the engine's ownership
guarantees, the same for every mode.

A copy carries the sync labels of its agent and source object. A target object without them was not
made by syncflow: a rule never updates or deletes it, and adopts it only where the rule explicitly
says so (``adopt="merge"``, publish mode's documented adoption) — never a cluster-scoped object and
never a system object. A refusal parks the key with a reason an operator can act on, and tells the
source's owner with an Event that names nothing but their own object.

System objects are out of reach whatever a rule says: nothing is written into or deleted from the
namespaces ``kube-system``, ``kube-public`` and ``kube-node-lease`` unless the deployment opens one
(``--allow-system-namespace``), and the Namespace objects ``default`` and ``kube-*`` are never
changed or deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from syncflow.queue.errors import PermanentError
from syncflow.sync import metadata as md
from syncflow.sync.desired import is_copy_of
from syncflow.sync.rule import Resource

SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})
"""Namespaces nothing is written into or deleted from, unless the deployment opens them."""

FOREIGN = "conflict:foreign"
COLLISION = "conflict:collision"
PROTECTED = "conflict:protected"
CONFLICT_CAUSES = frozenset({FOREIGN, COLLISION, PROTECTED})
"""Causes of refusals: a key parked for one of them counts as a conflict on its rule's config."""


class Owner(StrEnum):
    """Whose an object on the target is, seen from one source object's sync."""

    THIS_COPY = "this-copy"
    """This agent's copy of this very source object."""
    AGENT = "agent"
    """Made by this agent for no particular source object (e.g. a namespace a create needed)."""
    OTHER_COPY = "other-copy"
    """The copy of another source object, or an object of another agent."""
    FOREIGN = "foreign"
    """Not made by syncflow (no sync labels)."""


def owner_of(obj: Mapping[str, Any], agent: str, cluster: str, namespace: str, name: str) -> Owner:
    """Whose target object ``obj`` is, for the sync of source object ``cluster/namespace/name``."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    made_by = labels.get(md.AGENT_LABEL)
    copy_of_something = md.REMOTE_CLUSTER_LABEL in labels
    if made_by not in (None, agent):
        return Owner.OTHER_COPY
    if copy_of_something:
        return Owner.THIS_COPY if is_copy_of(obj, cluster, namespace, name) else Owner.OTHER_COPY
    return Owner.AGENT if made_by == agent else Owner.FOREIGN


class RefusedError(PermanentError):
    """A write or deletion the ownership rules forbid: the key parks until the cause is fixed and the key
    replayed (a resync also retries it). ``event_reason`` and ``event_message`` are what the source
    object's owner is told; they name nothing outside that object and its own copy's place."""

    def __init__(self, message: str, *, cause: str, event_reason: str, event_message: str) -> None:
        super().__init__(message, cause=cause)
        self.event_reason = event_reason
        self.event_message = event_message


@dataclass(frozen=True)
class Reach:
    """Where the engine may write and delete on a target: everything but system objects, and the system
    namespaces this deployment opened."""

    open_namespaces: frozenset[str] = frozenset()

    def protects_namespace(self, namespace: str) -> bool:
        """Whether nothing may be written into or deleted from ``namespace``."""
        return namespace in SYSTEM_NAMESPACES and namespace not in self.open_namespaces

    def protects(self, resource: Resource, namespace: str, name: str) -> bool:
        """Whether the object ``namespace/name`` of ``resource`` is a system object (never written or
        deleted): anything in a protected namespace, and the Namespaces ``default`` and ``kube-*``."""
        if resource.namespaced:
            return self.protects_namespace(namespace)
        return is_namespace(resource) and (name == "default" or name.startswith("kube-"))


def is_namespace(resource: Resource) -> bool:
    """Whether ``resource`` is the core Namespace type."""
    return (resource.group, resource.plural) == ("", "namespaces")


def protected(kind: str, namespace: str, name: str) -> RefusedError:
    """The refusal to write or delete a system object."""
    if namespace:
        message = (
            f"{kind} {namespace}/{name}: namespace {namespace} on the target is a system namespace syncflow "
            "never writes into or deletes from (open it with --allow-system-namespace)"
        )
        told = f"not synced: its copy would be in namespace {namespace} on the target, a system namespace"
    else:
        message = f"Namespace {name} on the target is a system namespace syncflow never changes or deletes"
        told = f"not synced: Namespace {name} on the target is a system namespace"
    return RefusedError(message, cause=PROTECTED, event_reason="SyncConflict", event_message=told)


def foreign(kind: str, namespace: str, name: str) -> RefusedError:
    """The refusal to take over a target object that syncflow did not create."""
    place = f"{namespace}/{name}" if namespace else name
    return RefusedError(
        f"{kind} {place} already exists on the target and was not created by syncflow: it is left as it "
        "is; delete or rename it there (or rename the source object), then replay the key",
        cause=FOREIGN,
        event_reason="SyncConflict",
        event_message=f"not synced: {kind} {place} already exists on the target and was not created by "
        "syncflow, so it is left untouched",
    )


def collision(kind: str, namespace: str, name: str, other: str) -> RefusedError:
    """The refusal to take over the copy of another source object (``other`` names it for operators)."""
    place = f"{namespace}/{name}" if namespace else name
    return RefusedError(
        f"name collision with {other}: {kind} {place} on the target is already its copy; change the "
        "naming rule so that copies of different objects get different names",
        cause=COLLISION,
        event_reason="NameCollision",
        event_message="not synced: the place of this object's copy on the target is already taken by the "
        "copy of another object; change the naming rule so that copies of different objects get "
        "different names",
    )
