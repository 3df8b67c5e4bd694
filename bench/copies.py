"""The bare-script baseline's writes, shaped like syncflow's: the same kcp path and the same bodies.

syncflow patches the finalizer through the APIExport's virtual workspace, labels and annotates its
copy like api-syncagent, and stores the source object's state in a labelled Secret. The baseline
does the same work, so neither side pays for a bigger body or a longer path than the other; the
benchmark's older, leaner writes stay available for comparison (``lean_bodies``, the direct path).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
LABEL = "syncagent.kcp.io"


def sha1_hex(text: str) -> str:
    """The hex SHA-1 of ``text`` (api-syncagent's name and namespace hash labels)."""
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


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
        Secret (syncflow's labels, the source's compact JSON under a hashed key)."""
        meta = source["metadata"]
        name, namespace = meta["name"], meta.get("namespace", "default")
        hashes = {
            f"{LABEL}/remote-object-cluster": cluster,
            f"{LABEL}/remote-object-name-hash": sha1_hex(name),
            f"{LABEL}/remote-object-namespace-hash": sha1_hex(namespace),
        }
        copy = {
            **copy,
            "metadata": {
                **copy["metadata"],
                "labels": {**copy["metadata"].get("labels", {}), f"{LABEL}/agent-name": self.agent, **hashes},
                "annotations": {
                    f"{LABEL}/remote-object-name": name,
                    f"{LABEL}/remote-object-namespace": namespace,
                },
            },
        }
        state = {
            **source,
            "metadata": {"labels": meta.get("labels", {}), "name": name, "namespace": namespace},
        }
        encoded = base64.b64encode(json.dumps(state, separators=(",", ":"), sort_keys=True).encode()).decode()
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": f"obj-state-{cluster}-{sha1_hex(namespace + '/' + name)[:20]}",
                "labels": {**hashes, f"{LABEL}/object-state": "true"},
            },
            "type": "Opaque",
            "data": {sha1_hex(f"{cluster}/{namespace}/{name}"): encoded},
        }
        return copy, secret

    @staticmethod
    def lean_bodies(cluster: str, source: Obj, copy: Obj) -> tuple[Obj, Obj]:
        """The benchmark's writes before issue 16's ninth round: one label and one annotation on the
        copy, a 4-byte state Secret without labels."""
        name = source["metadata"]["name"]
        copy = {
            **copy,
            "metadata": {
                **copy["metadata"],
                "labels": {**copy["metadata"].get("labels", {}), f"{LABEL}/remote-object-cluster": cluster},
                "annotations": {f"{LABEL}/remote-object-name": name},
            },
        }
        return copy, {"metadata": {"name": f"obj-state-{name}"}, "data": {"state": "e30="}}
