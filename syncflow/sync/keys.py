"""The engine's object keys and how watched objects map to them.

- ``sync/<rule>/<cluster>/<namespace>/<name>``: sync one source object (and its copy);
- ``status/<rule>/<cluster>/<namespace>/<name>``: return its copy's status to it;
- ``related/<rule>/<cluster>/<namespace>/<name>``: sync its related objects (rules with ``related``);
- ``release/<rule>/<agent>//<rule>``: release what a rule that went away made (``rule_key``);
- ``sweep/<rule>/<agent>//<rule>``: find a changed rule's objects that need work now (``rule_key``).

``<cluster>`` is the source object's logical cluster; objects of a plain cluster have none, so the
rule's fixed source cluster stands in (see ``Side.cluster``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncflow.kube.refs import ObjectRef
from syncflow.queue.keys import ObjectKey
from syncflow.sync.metadata import REMOTE_CLUSTER_LABEL, REMOTE_NAME_ANNOTATION, REMOTE_NAMESPACE_ANNOTATION
from syncflow.sync.rule import SyncRule

SYNC = "sync"
STATUS = "status"
RELATED = "related"
RELEASE = "release"
SWEEP = "sweep"
POLL = "poll"


def rule_key(verb: str, rule: str, agent: str) -> ObjectKey:
    """A key about a whole rule (``release``, ``sweep``)."""
    return ObjectKey(verb, rule, agent, "", rule)


def poll_key(rule: SyncRule) -> ObjectKey:
    """The key of one poll of a rule whose source is polled rather than watched (upsync)."""
    return ObjectKey(POLL, rule.name, rule.source.cluster or rule.source.endpoint, "", rule.name)


def source_ref(rule: SyncRule, ref: ObjectRef) -> ObjectRef:
    """``ref`` of a source object with the rule's fixed cluster filled in where the object has none."""
    if ref.cluster or not rule.source.cluster:
        return ref
    return ObjectRef(rule.source.cluster, ref.namespace, ref.name)


def key_for(verb: str, rule: SyncRule, ref: ObjectRef) -> ObjectKey:
    """The ``verb`` key of source object ``ref``."""
    ref = source_ref(rule, ref)
    return ObjectKey(verb, rule.name, ref.cluster, ref.namespace, ref.name)


def owner_ref(copy: Mapping[str, Any]) -> ObjectRef | None:
    """The source object a copy belongs to, from its sync label and annotations (None if not a copy)."""
    metadata = copy.get("metadata") or {}
    cluster = (metadata.get("labels") or {}).get(REMOTE_CLUSTER_LABEL)
    annotations = metadata.get("annotations") or {}
    name = annotations.get(REMOTE_NAME_ANNOTATION)
    if not cluster or not name:
        return None
    return ObjectRef(cluster, annotations.get(REMOTE_NAMESPACE_ANNOTATION, ""), name)
