"""The cluster controller: one Cluster's ``cluster/…`` key — finalizer, probe, Ready, and release on delete.

A probe builds the client from the current kubeconfig and asks the cluster for its version and for
one namespace (so a rejected credential shows): ``Ready`` becomes True (``Connected``) or False with
``InvalidKubeconfig``, ``Unreachable`` or ``Unauthorized``. Every request has short connect and read
timeouts, so a probe ends well within a probe period. A deleted Cluster stops being synced: its rules
are marked gone, their finalizers released on every kcp object, and — with ``--cluster-cleanup
delete`` and the cluster reachable — the copies in it deleted; then its own finalizer goes. A type no
longer synced (``--resources`` changed) is released the same way on every Cluster.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from kubernetes.client.exceptions import ApiException

from syncflow.api.cluster import PATH, ReadyReason
from syncflow.api.conditions import find, now, set_condition
from syncflow.kube.addresses import RefusedAddressError
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.clusters.clients import ClustersEndpoints
from syncflow.modes.clusters.identity import CLEANUP_FINALIZER, SyncedType, endpoint
from syncflow.modes.clusters.rules import ClustersRules, pulled
from syncflow.queue.service import QueueService
from syncflow.sync import trouble
from syncflow.sync.endpoints import EndpointError
from syncflow.sync.reconciler import Obj, get_or_none
from syncflow.sync.rule import SyncRule
from syncflow.sync.worker import RuleWorker
from syncflow.util.logs import log_event
from syncflow.util.neterrors import failure_kind, status_text

logger = logging.getLogger("syncflow.clusters")

PROBE_TIMEOUT = (3.0, 5.0)
MESSAGE_LIMIT = 512


@dataclass(frozen=True)
class Probe:
    """What one probe found."""

    ok: bool
    reason: ReadyReason
    message: str


def probe(endpoints: ClustersEndpoints, cluster: str) -> Probe:
    """Whether ``cluster`` answers with its kubeconfig's credentials (read again now)."""
    try:
        api = endpoints.clusters.get(endpoint(cluster), fresh=True)
    except EndpointError as exc:
        reason: ReadyReason = "InvalidKubeconfig" if exc.reason == "InvalidKubeconfig" else "Unreachable"
        return Probe(False, reason, str(exc)[:MESSAGE_LIMIT])
    quick = JsonApi(api.api, timeout=PROBE_TIMEOUT, endpoint=api.endpoint)  # its outcome: connection status
    try:
        quick.get("/version")
        quick.get("/api/v1/namespaces", limit="1")
    except RefusedAddressError as exc:
        return Probe(False, "InvalidKubeconfig", str(exc))
    except ApiException as exc:  # the server's reason phrase and body stay out of the status
        reason = "Unauthorized" if exc.status in (401, 403) else "Unreachable"
        return Probe(False, reason, f"the cluster answers {status_text(exc.status)}")
    except Exception as exc:  # every failure to answer is what the probe reports, by its kind only
        return Probe(False, "Unreachable", f"the probe failed: {failure_kind(exc)}")
    return Probe(True, "Connected", "the cluster answers with the kubeconfig's credentials")


@dataclass
class ClusterController:
    """Reconciles Cluster objects of the workspace."""

    kcp: JsonApi
    endpoints: ClustersEndpoints
    worker: RuleWorker
    rules: ClustersRules
    cleanup: Literal["keep", "delete"]
    service: QueueService
    heartbeat_threshold: float = 30.0
    """Seconds without a heartbeat after which a Pull or None mode Cluster's syncer counts as gone."""

    def reconcile(self, name: str) -> Probe | None:
        """Probe the Cluster and record it (or release it when deleted); returns the probe."""
        obj = get_or_none(self.kcp, f"{PATH}/{name}")
        if obj is None:
            return None
        if obj["metadata"].get("deletionTimestamp"):
            self._finalize(obj)
            return None
        obj = self._set_finalizers(obj, sorted({*self._finalizers(obj), CLEANUP_FINALIZER}))
        obj = self._forget_unsynced(obj)
        found = probe(self.endpoints, name)
        if found.ok and pulled(obj):
            found = self.syncer_heartbeat(obj) or found
        conditions = (obj.get("status") or {}).get("conditions")
        was = (find(conditions, "Ready") or {}).get("status")
        generation = obj["metadata"].get("generation")
        conditions = set_condition(conditions, "Ready", found.ok, found.reason, found.message, generation)
        names = [t.rule_name(name) for t in self.rules.types]
        mine = trouble.total(trouble.troubles(self.service, names), names)
        conditions = trouble.conditions(conditions, mine, generation)
        status = {"conditions": conditions, "lastProbeTime": now()}
        self.kcp.merge_patch(f"{PATH}/{name}/status", {"status": status})
        if was != ("True" if found.ok else "False"):
            log_event(logger, "clusters.ready", cluster=name, ready=found.ok, reason=found.reason)
        return found

    def syncer_heartbeat(self, obj: Obj) -> Probe | None:
        """Why a Pull (or None) mode Cluster is not Ready although it answers: no syncer in it has
        heartbeat within ``heartbeat_threshold`` (None: one has)."""
        last = (obj.get("status") or {}).get("lastSyncerHeartbeatTime")
        name = obj["metadata"]["name"]
        if not last:
            message = (
                f"no syncer has heartbeat yet: run it in the cluster (syncflow clusters manifest {name})"
            )
            return Probe(False, "NoSyncer", message)
        age = time.time() - datetime.strptime(str(last), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
        if age > self.heartbeat_threshold:
            return Probe(False, "NoSyncer", f"the syncer in the cluster last heartbeat at {last}")
        return None

    def _release(self, name: str, entries: list[Obj], remove: bool) -> None:
        """Release the rules of ``entries``' types on Cluster ``name``: every kcp object's finalizer
        (and with ``remove`` every copy first). Every rule is quiesced before the first is released, so
        a retry while runs end redoes no release."""
        rules: list[tuple[SyncedType, SyncRule]] = []
        for entry in entries:
            t = SyncedType(entry["resource"], entry.get("group", ""))
            version = str((entry.get("versions") or [""])[0])
            resource = self.rules.resource(t, version) if version else None
            if resource is None:
                continue  # never synced, or no longer served: no kcp object holds its finalizer
            rules.append((t, self.rules.rule(name, resource)))
        self.worker.quiesce(rule for _, rule in rules)
        for t, rule in rules:
            released = self.worker.release(rule, remove_copies=remove)
            log_event(logger, "clusters.released", cluster=name, resource=t.group_resource, objects=released)

    def _forget_unsynced(self, obj: Obj) -> Obj:
        """Types no longer synced (``--resources`` changed): release their rules, then drop their
        ``status.syncedResources`` entries."""
        entries = (obj.get("status") or {}).get("syncedResources") or []
        kept = [e for e in entries if SyncedType(e["resource"], e.get("group", "")) in self.rules.types]
        if len(kept) == len(entries):
            return obj
        self._release(obj["metadata"]["name"], [e for e in entries if e not in kept], remove=False)
        patch = {
            "metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]},
            "status": {"syncedResources": kept},
        }
        updated: Obj = self.kcp.merge_patch(f"{PATH}/{obj['metadata']['name']}/status", patch)
        return updated

    @staticmethod
    def _finalizers(obj: Obj) -> list[str]:
        return list(obj["metadata"].get("finalizers") or [])

    def _set_finalizers(self, obj: Obj, finalizers: list[str]) -> Obj:
        if finalizers == sorted(self._finalizers(obj)):
            return obj
        meta = obj["metadata"]
        patch = {"metadata": {"finalizers": finalizers or None, "resourceVersion": meta["resourceVersion"]}}
        updated: Obj = self.kcp.merge_patch(f"{PATH}/{meta['name']}", patch)
        return updated

    def _finalize(self, obj: Obj) -> None:
        name = obj["metadata"]["name"]
        if CLEANUP_FINALIZER not in self._finalizers(obj):
            return
        remove = self.cleanup == "delete" and probe(self.endpoints, name).ok
        if self.cleanup == "delete" and not remove:
            log_event(
                logger, "clusters.cleanup_skipped", level=logging.WARNING, cluster=name, reason="unreachable"
            )
        self._release(name, (obj.get("status") or {}).get("syncedResources") or [], remove)
        self._set_finalizers(obj, sorted(set(self._finalizers(obj)) - {CLEANUP_FINALIZER}))
        self.endpoints.clusters.forget(endpoint(name))
