"""The API object a mode's rules come from — a SyncTarget, a Cluster, an EdgeSyncConfig — holds a
finalizer of syncflow's while it lives, so that deleting it waits until every finalizer its rules put
on source objects is released (and their copies removed where the rules' policy says so): no
finalizer outlives the syncer's right to remove it (an owner's deletion often takes the syncer's RBAC
with it)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from syncflow.kube.jsonapi import JsonApi
from syncflow.sync.reconciler import get_or_none
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.sync")

Obj = dict[str, Any]

OWNER_FINALIZER = "syncflow.kcp.io/release"
"""Held on an owner object until what its rules made is released."""


def deleting(obj: Obj) -> bool:
    """Whether the owner is being deleted."""
    return bool(obj["metadata"].get("deletionTimestamp"))


def holds(obj: Obj) -> bool:
    """Whether the owner still holds syncflow's finalizer."""
    return OWNER_FINALIZER in (obj["metadata"].get("finalizers") or ())


def hold(api: JsonApi, path: str, obj: Obj) -> Obj:
    """Add syncflow's finalizer to a live owner at ``path`` (conditional on the version read)."""
    if holds(obj) or deleting(obj):
        return obj
    return _set(api, path, obj, [*(obj["metadata"].get("finalizers") or ()), OWNER_FINALIZER])


def let_go(api: JsonApi, path: str, obj: Obj) -> Obj:
    """Remove syncflow's finalizer from the owner (its rules are released)."""
    if not holds(obj):
        return obj
    return _set(api, path, obj, [f for f in obj["metadata"].get("finalizers") or () if f != OWNER_FINALIZER])


def _set(api: JsonApi, path: str, obj: Obj, finalizers: list[str]) -> Obj:
    meta = obj["metadata"]
    patch = {"metadata": {"finalizers": finalizers or None, "resourceVersion": meta["resourceVersion"]}}
    updated: Obj = api.merge_patch(path, patch)
    return updated


def settle(api: JsonApi, path: str, retire: Callable[[], int]) -> bool:
    """Keep the owner at ``path`` in line: hold syncflow's finalizer while it lives; once it is being
    deleted, ``retire`` its rules (returns the objects released), then let it go. True when the owner
    is gone or going (its rules must not sync any more)."""
    obj = get_or_none(api, path)
    if obj is None:
        return True
    if not deleting(obj):
        hold(api, path, obj)
        return False
    if holds(obj):
        released = retire()
        let_go(api, path, obj)
        log_event(logger, "owner.released", owner=path, objects=released)
    return True
