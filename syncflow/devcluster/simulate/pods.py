"""Pods of a workload: making them from a template, and reading their state."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import orjson

from syncflow.devcluster.simulate.conditions import is_true
from syncflow.devcluster.simulate.owners import owner_reference
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy

_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of kube's generated name suffixes


def template_hash(template: Obj) -> str:
    """A stable 10-character hash of a pod template (kube's ``pod-template-hash`` shape)."""
    digest = int.from_bytes(hashlib.sha256(orjson.dumps(template, option=orjson.OPT_SORT_KEYS)).digest()[:8])
    chars = []
    for _ in range(10):
        digest, rest = divmod(digest, len(_SAFE_ALPHABET))
        chars.append(_SAFE_ALPHABET[rest])
    return "".join(chars)


def pod_from_template(owner: Obj, template: Obj, labels: dict[str, str], *, name: str = "") -> Obj:
    """A Pod for ``owner`` from its template, with extra ``labels``; without ``name`` a generated one."""
    meta = deep_copy(template.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), **labels}
    meta["ownerReferences"] = [owner_reference(owner)]
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = owner["metadata"]["name"] + "-"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": deep_copy(template.get("spec") or {}),
    }


def is_ready(pod: Obj) -> bool:
    """The pod's Ready condition is True."""
    return is_true(pod, "Ready")


def phase(pod: Obj) -> str:
    """status.phase (Pending when unset)."""
    return str((pod.get("status") or {}).get("phase") or "Pending")


def is_active(pod: Obj) -> bool:
    """Not finished and not being deleted."""
    return phase(pod) not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


@dataclass(frozen=True)
class PodCounts:
    """What a workload's status counts, over the pods it controls."""

    active: int
    ready: int
    succeeded: int
    failed: int


def count(pods: list[Obj]) -> PodCounts:
    """Count active, ready (and active), succeeded and failed pods."""
    active = [p for p in pods if is_active(p)]
    return PodCounts(
        active=len(active),
        ready=sum(1 for p in active if is_ready(p)),
        succeeded=sum(1 for p in pods if phase(p) == "Succeeded"),
        failed=sum(1 for p in pods if phase(p) == "Failed"),
    )


def without_zeros(status: Obj) -> Obj:
    """Drop zero counts, as kube's ``omitempty`` status fields do."""
    return {k: v for k, v in status.items() if v != 0 or k == "replicas"}
