"""The bare-script baseline's writes, shaped like syncflow's: the same kcp path and the same bodies.

syncflow patches the finalizer through the APIExport's virtual workspace, labels and annotates its
copy like api-syncagent, and stores the source object's state in a labelled Secret. The baseline
builds the same bodies with syncflow's own helpers (it still sends every request itself), so neither
side pays for a bigger body or a longer path than the other; the benchmark's older, leaner writes
stay available for comparison (``lean_bodies``, the direct path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from syncflow.sync import metadata as md
from syncflow.sync import state
from syncflow.sync.desired import build_desired, managed_content
from syncflow.sync.naming import sha1_hex

Obj = dict[str, Any]
STATE_NAMESPACE = "syncflow"
"""The benchmark's ``--namespace`` (syncflow's state Secrets), where the baseline writes its own."""


@dataclass(frozen=True)
class CopyWrites:
    """Paths and bodies of one baseline object's writes. ``export_path`` is the virtual workspace's
    path (``/services/apiexport/<cluster>/<export>``); empty, the kcp write goes to ``/clusters/<team>``."""

    agent: str
    export_path: str
    resource_path: str
    """``apis/<group>/<version>/namespaces/<namespace>/<plural>``, the source objects' collection."""

    def kcp_path(self, team: str, cluster: str, name: str) -> str:
        """Where the finalizer patch goes: the virtual workspace, or the team workspace directly."""
        if self.export_path:
            return f"{self.export_path}/clusters/{cluster}/{self.resource_path}/{name}"
        return f"/clusters/{team}/{self.resource_path}/{name}"

    def bodies(self, cluster: str, source: Obj, copy: Obj) -> tuple[Obj, Obj]:
        """The local copy of ``source`` (``copy`` plus syncflow's labels and annotations) and its state
        Secret, built by syncflow's own helpers (its labels, the source's state under its key)."""
        meta = source["metadata"]
        name, namespace = meta["name"], meta.get("namespace", "default")
        labels = {
            **copy["metadata"].get("labels", {}),
            md.AGENT_LABEL: self.agent,
            md.REMOTE_CLUSTER_LABEL: cluster,
            md.REMOTE_NAME_HASH_LABEL: sha1_hex(name),
            md.REMOTE_NAMESPACE_HASH_LABEL: sha1_hex(namespace),
        }
        annotations = {md.REMOTE_NAME_ANNOTATION: name, md.REMOTE_NAMESPACE_ANNOTATION: namespace}
        copy = {**copy, "metadata": {**copy["metadata"], "labels": labels, "annotations": annotations}}
        content = {
            **source,
            "metadata": {"labels": meta.get("labels", {}), "name": name, "namespace": namespace},
        }
        entries = {state.state_key(cluster, "", namespace, name): content}
        kind = (source["apiVersion"], source["kind"])
        return copy, state.state_secret(STATE_NAMESPACE, cluster, *kind, namespace, name, entries)

    @staticmethod
    def lean_bodies(cluster: str, source: Obj, copy: Obj) -> tuple[Obj, Obj]:
        """The benchmark's writes before issue 16's ninth round: one label and one annotation on the
        copy, a 4-byte state Secret without labels."""
        name = source["metadata"]["name"]
        copy = {
            **copy,
            "metadata": {
                **copy["metadata"],
                "labels": {**copy["metadata"].get("labels", {}), md.REMOTE_CLUSTER_LABEL: cluster},
                "annotations": {md.REMOTE_NAME_ANNOTATION: name},
            },
        }
        return copy, {"metadata": {"name": f"obj-state-{name}"}, "data": {"state": "e30="}}


def engine_copy(
    obj: Obj, *, cluster: str, namespace: str, agent: str, annotations: dict[str, str] | None = None
) -> Obj:
    """The copy of ``obj`` (as its API server served it) in ``namespace``, built by the engine's own
    helper as a rule without spec mutations writes it: server metadata and the status left out, the
    sync labels and annotations added (and a mode's own ``annotations``)."""
    meta = obj["metadata"]
    copy = build_desired(
        obj,
        local_api_version=obj["apiVersion"],
        local_kind=obj["kind"],
        local_namespace=namespace,
        local_name=meta["name"],
        cluster=cluster,
        workspace_path=None,
        agent=agent,
    )
    copy["metadata"]["annotations"].update(annotations or {})
    return copy


def engine_state_secret(obj: Obj, *, cluster: str, state_namespace: str) -> Obj:
    """The state Secret in ``state_namespace`` the engine writes beside the copy of ``obj``: its managed
    content under its state key."""
    meta = obj["metadata"]
    name, namespace = meta["name"], meta.get("namespace", "")
    entries = {state.state_key(cluster, "", namespace, name): managed_content(obj)}
    return state.state_secret(
        state_namespace, cluster, obj["apiVersion"], obj["kind"], namespace, name, entries
    )
