"""The Deployment splitter (``split/…`` keys): an unlabelled Deployment in kcp is a root whose
replicas are spread over the Ready clusters as labelled shards, and whose status sums theirs.

Replicas are divided evenly over the Ready clusters that take Deployments, the remainder going to
the first clusters in name order. Each gets a shard ``<root>--<cluster>`` labelled for it, owned by
the root (ownerReferences), its template copied from the root. A shard on a cluster that is not
Ready is scaled to 0 (its replicas move to the others); a shard on a Cluster that no longer exists
is deleted, as are all shards when the root is deleted or opts out
(``workloads.kcp.dev/split: "false"``). The root's status is the summed counts of the shards on
Ready clusters (another's last status may no longer hold) and, per condition type, True only when
every one of them says True; ``ShardsUnknown`` says which clusters' shards are left out.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.api.cluster import PATH
from syncflow.api.conditions import is_true, set_condition
from syncflow.kube.jsonapi import JsonApi, resource_path
from syncflow.modes.clusters.identity import CLUSTER_LABEL, DEPLOYMENTS, SPLIT_ANNOTATION, shard_name
from syncflow.queue.keys import ObjectKey
from syncflow.sync.reconciler import get_or_none, object_not_found
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.clusters")

Obj = dict[str, Any]
COUNTS = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")
SHARDS_UNKNOWN = "ShardsUnknown"
"""The root's condition: True while shards on clusters that are not Ready are left out of its status."""
UNKNOWN = "ShardStatusUnknown"
NAMED = 10
"""Clusters a ShardsUnknown message names at most."""


def divide(replicas: int, clusters: list[str]) -> dict[str, int]:
    """``replicas`` spread evenly over ``clusters`` in name order; the first ones get the remainder."""
    ordered = sorted(clusters)
    if not ordered:
        return {}
    share, rest = divmod(replicas, len(ordered))
    return {name: share + (1 if index < rest else 0) for index, name in enumerate(ordered)}


def _copied(annotations: dict[str, str] | None) -> dict[str, str]:
    """The annotations a shard takes from its root: not kcp's own, not kubectl's last-applied state."""
    return {
        k: v
        for k, v in (annotations or {}).items()
        if not k.startswith(("kcp.io/", "kubectl.kubernetes.io/"))
    }


def controller_of(obj: Obj) -> str | None:
    """The name of the Deployment that controls ``obj`` (a shard's root), if any."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "Deployment":
            return str(ref.get("name"))
    return None


def split_key(workspace: str, namespace: str, name: str) -> ObjectKey:
    """The key that splits root ``namespace/name``."""
    return ObjectKey("split", DEPLOYMENTS.group_resource, workspace, namespace, name)


def _cluster(shard: Obj) -> str:
    return str((shard["metadata"].get("labels") or {}).get(CLUSTER_LABEL, "?"))


def _conditions(shard: Obj) -> list[Obj]:
    return list((shard.get("status") or {}).get("conditions") or [])


def _condition(conditions: list[Obj] | None, type: str, known: list[Obj], unknown: bool) -> list[Obj]:
    """``conditions`` with ``type`` from the shards whose status is ``known``: True when all of them
    say True, else the first failing one's; Unknown when none of them has it."""
    found = [(s, c) for s in known for c in _conditions(s) if c["type"] == type]
    failing = [(s, c) for s, c in found if c.get("status") != "True"]
    if failing:
        shard, condition = failing[0]
        reason = condition.get("reason") or "ShardNotReady"
        return set_condition(
            conditions, type, False, reason, f"{_cluster(shard)}: {condition.get('message', '')}"
        )
    if found:
        where = " whose status is known" if unknown else ""
        return set_condition(conditions, type, True, "AllShards", f"true in all {len(found)} shards{where}")
    return set_condition(conditions, type, None, UNKNOWN, "no shard whose status is known reports it")


def aggregate(shards: list[Obj], root: Obj, ready: Collection[str]) -> Obj:
    """The root's status from the shards on ``ready`` clusters (a shard on another may report what is
    no longer so): their summed counts, one condition per type, the root's generation observed, and
    ``ShardsUnknown`` naming the clusters whose shards are not counted."""
    known = [s for s in shards if _cluster(s) in ready]
    unknown = sorted({_cluster(s) for s in shards} - set(ready))
    status: Obj = {"observedGeneration": root["metadata"].get("generation", 0)}
    for count in COUNTS:
        status[count] = sum(int((s.get("status") or {}).get(count) or 0) for s in known)
    conditions = (root.get("status") or {}).get("conditions")
    for type in dict.fromkeys(c["type"] for s in shards for c in _conditions(s)):
        conditions = _condition(conditions, type, known, bool(unknown))
    status["conditions"] = _shards_unknown(conditions, unknown)
    return status


def _shards_unknown(conditions: list[Obj] | None, unknown: list[str]) -> list[Obj]:
    """``conditions`` with ``ShardsUnknown``: True, naming the clusters, while any shard is uncounted."""
    if not unknown:
        return set_condition(
            conditions, SHARDS_UNKNOWN, False, "AllShardsKnown", "every shard is on a Ready cluster"
        )
    names = ", ".join(unknown[:NAMED]) + (", ..." if len(unknown) > NAMED else "")
    message = (
        f"the status of the shards on {len(unknown)} cluster(s) that are not Ready is unknown and not "
        f"counted: {names}"
    )
    return set_condition(conditions, SHARDS_UNKNOWN, True, UNKNOWN, message)


@dataclass
class Fleet:
    """The Clusters as the splitter sees them (those being deleted left out)."""

    known: set[str] = field(default_factory=set)
    ready: set[str] = field(default_factory=set)
    """Ready: what their shards report is current."""
    takes: list[str] = field(default_factory=list)
    """Ready and take Deployments: the replicas go to them."""


@dataclass
class Splitter:
    """Splits the roots of one kcp workspace."""

    kcp: JsonApi
    version: str = "v1"

    def path(self, namespace: str = "", name: str = "") -> str:
        """A Deployment path in the workspace."""
        return resource_path("apps", self.version, "deployments", namespace, name)

    def fleet(self) -> Fleet:
        """The Clusters that are not being deleted, which of them are Ready, and which take Deployments."""
        fleet = Fleet()
        for obj in self.kcp.get(PATH).get("items") or []:
            if obj["metadata"].get("deletionTimestamp"):
                continue
            name = obj["metadata"]["name"]
            fleet.known.add(name)
            status = obj.get("status") or {}
            if not is_true(status.get("conditions"), "Ready"):
                continue
            fleet.ready.add(name)
            if (DEPLOYMENTS.entry(status.get("syncedResources")) or {}).get("state") == "Accepted":
                fleet.takes.append(name)
        return fleet

    def roots(self) -> list[Obj]:
        """Every root Deployment of the workspace (none while kcp does not serve Deployments yet)."""
        try:
            return self.kcp.get(self.path(), labelSelector=f"!{CLUSTER_LABEL}").get("items") or []
        except ApiException as exc:
            if exc.status == 404 and not object_not_found(exc):
                return []
            raise

    def shards(self, namespace: str, root: str) -> list[Obj]:
        """The Deployments in ``namespace`` that ``root`` controls."""
        labelled = self.kcp.get(self.path(namespace), labelSelector=CLUSTER_LABEL).get("items") or []
        return [d for d in labelled if controller_of(d) == root]

    def split(self, namespace: str, name: str) -> None:
        """Bring the shards of root ``namespace/name`` (or of the root of shard ``name``) in line."""
        obj = get_or_none(self.kcp, self.path(namespace, name))
        if obj is not None and CLUSTER_LABEL in (obj["metadata"].get("labels") or {}):
            root_name = controller_of(obj)
            if root_name is None:  # scheduled to one cluster by its user: if it was a root, not any more
                for shard in self.shards(namespace, name):
                    self._delete(shard)
                return
            name, obj = root_name, get_or_none(self.kcp, self.path(namespace, root_name))
        shards = self.shards(namespace, name)
        root_uid = obj["metadata"]["uid"] if obj is not None else None
        opted_out = (
            obj is not None and (obj["metadata"].get("annotations") or {}).get(SPLIT_ANNOTATION) == "false"
        )
        if obj is None or obj["metadata"].get("deletionTimestamp") or opted_out:
            for shard in shards:
                self._delete(shard)
            return
        fleet = self.fleet()
        shares = divide(int((obj.get("spec") or {}).get("replicas", 1)), fleet.takes)
        current = {}
        for shard in shards:
            cluster = (shard["metadata"].get("labels") or {}).get(CLUSTER_LABEL, "")
            owner_uid = next(
                (r.get("uid") for r in shard["metadata"].get("ownerReferences") or [] if r.get("controller")),
                None,
            )
            if (
                cluster not in fleet.known
                or owner_uid != root_uid
                or shard["metadata"]["name"] != shard_name(name, cluster)
            ):
                self._delete(shard)  # its Cluster is gone, or it belongs to an earlier root of this name
            else:
                current[cluster] = shard
        result = []
        for cluster in sorted(set(shares) | set(current)):
            result.append(self._ensure(obj, cluster, shares.get(cluster, 0), current.get(cluster)))
        status = aggregate(result, obj, fleet.ready)
        if status != obj.get("status"):
            updated = self.kcp.replace(self.path(namespace, name) + "/status", {**obj, "status": status})
            log_event(
                logger,
                "clusters.root_status",
                key=f"{namespace}/{name}",
                ready=status["readyReplicas"],
                replicas=status["replicas"],
                rv=updated["metadata"]["resourceVersion"],
            )

    def _ensure(self, root: Obj, cluster: str, replicas: int, shard: Obj | None) -> Obj:
        """The shard of ``root`` on ``cluster`` with ``replicas``, created or updated."""
        meta = root["metadata"]
        labels = {**(meta.get("labels") or {}), CLUSTER_LABEL: cluster}
        annotations = _copied(meta.get("annotations"))
        spec = {**(root.get("spec") or {}), "replicas": replicas}
        owner = {
            "apiVersion": root.get("apiVersion", "apps/v1"),
            "kind": "Deployment",
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        wanted_meta = {
            "name": shard_name(meta["name"], cluster),
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner],
        }
        if shard is None:
            created: Obj = self.kcp.create(
                self.path(meta["namespace"]),
                {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": wanted_meta, "spec": spec},
            )
            log_event(
                logger,
                "clusters.shard_created",
                key=f"{meta['namespace']}/{wanted_meta['name']}",
                cluster=cluster,
                replicas=replicas,
            )
            return created
        have = shard["metadata"]
        if (
            shard.get("spec") == spec
            and have.get("labels") == labels
            and _copied(have.get("annotations")) == annotations
            and have.get("ownerReferences") == [owner]
        ):
            return shard
        body = {
            **shard,
            "metadata": {
                **{k: v for k, v in have.items() if k not in ("labels", "annotations", "ownerReferences")},
                **wanted_meta,
                "resourceVersion": have["resourceVersion"],
            },
            "spec": spec,
        }
        updated: Obj = self.kcp.replace(self.path(meta["namespace"], have["name"]), body)
        log_event(
            logger,
            "clusters.shard_updated",
            key=f"{meta['namespace']}/{have['name']}",
            cluster=cluster,
            replicas=replicas,
        )
        return updated

    def _delete(self, shard: Obj) -> None:
        meta = shard["metadata"]
        try:
            self.kcp.delete(
                self.path(meta["namespace"], meta["name"]), {"preconditions": {"uid": meta["uid"]}}
            )
        except ApiException as exc:
            if exc.status not in (404, 409):
                raise
        log_event(logger, "clusters.shard_deleted", key=f"{meta['namespace']}/{meta['name']}")
