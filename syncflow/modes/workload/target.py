"""A SyncTarget's identities (kcp v0.11's formulas) and the paths workload mode reads and writes."""

from __future__ import annotations

import hashlib

from syncflow.sync.placement import base36

SYNC_TARGETS = "/apis/workload.kcp.io/v1alpha1/synctargets"
KCP = "kcp"
CLUSTER = "cluster"

SYNC_TARGET_ANNOTATION = "syncer.kcp.io/sync-target"
WORKSPACE_ANNOTATION = "syncer.kcp.io/workspace"
LAST_SYNC_ANNOTATION = "syncer.kcp.io/last-sync"
FINALIZER_PREFIX = "workload.kcp.io/syncer-"
_BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def sync_target_key(logical_cluster: str, name: str) -> str:
    """kcp's ``ToSyncTargetKey``: base62 of SHA-224 of ``<logical cluster name>:<name>``."""
    number = int.from_bytes(hashlib.sha224(f"{logical_cluster}:{name}".encode()).digest(), "big")
    out = ""
    while number:
        number, rest = divmod(number, 62)
        out = _BASE62[rest] + out
    return out or "0"


def finalizer(logical_cluster: str, name: str) -> str:
    """The finalizer the syncer holds on upstream objects: ``workload.kcp.io/syncer-<key>``."""
    return FINALIZER_PREFIX + sync_target_key(logical_cluster, name)


def syncer_id(name: str, uid: str) -> str:
    """kcp's ``getSyncerID``: ``kcp-syncer-<name>-<first 8 base36 of SHA-224 of the UID>``."""
    return f"kcp-syncer-{name}-{base36(hashlib.sha224(uid.encode()).digest())[:8]}"
