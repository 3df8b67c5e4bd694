"""Which source objects a rule syncs: its ``Selector`` (labels, annotations, fields, namespaces, names)."""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from syncflow.sync.metadata import AGENT_LABEL
from syncflow.sync.rule import Selector, SelectorTerm, SyncRule
from syncflow.util.selectors import FieldSelector, LabelSelector


@functools.lru_cache(maxsize=1024)
def _labels(text: str) -> LabelSelector:
    return LabelSelector.parse(text)


class _EveryField(Collection[str]):
    """Rules may select on any field of an object (an API server supports only a few)."""

    def __contains__(self, item: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


@functools.lru_cache(maxsize=256)
def _fields(text: str) -> FieldSelector:
    return FieldSelector.parse(text, supported=_EveryField())


def _meta(obj: Mapping[str, Any], field: str) -> Mapping[str, str]:
    value: Mapping[str, str] = (obj.get("metadata") or {}).get(field) or {}
    return value


CLUSTER_PUBLISHED = frozenset({("", "configmaps", "kube-root-ca.crt")})
"""(group, plural, name) of objects every cluster, and kcp in every workspace, publishes into each
namespace itself (kube-controller-manager's root-ca-cert-publisher): never a source, in any mode."""


def never_synced(rule: SyncRule, obj: Mapping[str, Any]) -> bool:
    """Whether ``rule`` never syncs ``obj``, whatever its selector: a copy this agent made (no loops
    between rules), or an object the source cluster publishes in every namespace."""
    meta = obj.get("metadata") or {}
    if (meta.get("labels") or {}).get(AGENT_LABEL) == rule.agent:
        return True
    source = rule.source.resource
    return (source.group, source.plural, meta.get("name", "")) in CLUSTER_PUBLISHED


def needs_namespace(selector: Selector, obj: Mapping[str, Any]) -> bool:
    """Whether matching ``obj`` needs its source Namespace object (a namespace label selector)."""
    terms = (selector, *selector.any_of)
    return any(t.namespace_labels for t in terms) and bool((obj.get("metadata") or {}).get("namespace"))


def matches(
    selector: Selector, obj: Mapping[str, Any], namespace_obj: Mapping[str, Any] | None = None
) -> bool:
    """Whether source object ``obj`` is selected: not excluded by name, its own conditions, and one of
    ``any_of``'s when there are any.

    A namespace label selector applies to namespaced objects only, against the labels of their
    Namespace ``namespace_obj``; a non-empty one with no Namespace object does not match.
    """
    if (obj.get("metadata") or {}).get("name", "") in selector.exclude_names:
        return False
    if not _term_matches(selector, obj, namespace_obj):
        return False
    return not selector.any_of or any(_term_matches(t, obj, namespace_obj) for t in selector.any_of)


def _term_matches(
    term: SelectorTerm, obj: Mapping[str, Any], namespace_obj: Mapping[str, Any] | None
) -> bool:
    meta = obj.get("metadata") or {}
    if term.namespaces and meta.get("namespace", "") not in term.namespaces:
        return False
    if term.names and meta.get("name", "") not in term.names:
        return False
    if not _labels(term.labels).matches(_meta(obj, "labels")):
        return False
    if not _labels(term.annotations).matches(_meta(obj, "annotations")):
        return False
    if term.fields and not _fields(term.fields).matches(obj):
        return False
    if not term.namespace_labels or not meta.get("namespace"):
        return True
    return namespace_obj is not None and _labels(term.namespace_labels).matches(
        _meta(namespace_obj, "labels")
    )


def may_select(rule: SyncRule, obj: Mapping[str, Any]) -> bool:
    """Whether the rule selects source object ``obj``, or may (its Namespace's labels decide, unread
    here); never what :func:`never_synced` names."""
    if never_synced(rule, obj):
        return False
    return needs_namespace(rule.selector, obj) or matches(rule.selector, obj)


def concerns(rule: SyncRule, obj: Mapping[str, Any]) -> bool:
    """Whether a source object may need work: it is (or may be) selected, or holds the rule's finalizer."""
    if may_select(rule, obj):
        return True
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels.get(AGENT_LABEL) != rule.agent and rule.holds(obj)


def keeps(rule: SyncRule, obj: Mapping[str, Any]) -> bool:
    """Whether the rule's ``keep`` selects source object ``obj`` (its copy outlives it)."""
    return rule.keep is not None and matches(rule.keep, obj)


def returns_status(rule: SyncRule, obj: Mapping[str, Any]) -> bool:
    """Whether the copy of source object ``obj`` returns its status (the rule returns status, and its
    ``status_for``, when set, selects the object)."""
    return rule.status == "return" and (rule.status_for is None or matches(rule.status_for, obj))
