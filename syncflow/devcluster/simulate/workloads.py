"""What every workload controller needs: the pods it controls, and selector matching."""

from __future__ import annotations

from syncflow.devcluster.simulate.api import Api
from syncflow.devcluster.simulate.owners import OwnerIndex, controlled_by
from syncflow.devcluster.store import Obj
from syncflow.selectors import LabelSelector


def controlled(api: Api, index: OwnerIndex, cluster: str, owner: Obj, group: str, plural: str) -> list[Obj]:
    """Objects of ``group/plural`` whose controller is ``owner``."""
    found = []
    for ref in index.dependents(cluster, owner["metadata"]["uid"]):
        if ref[:2] != (group, plural):
            continue
        obj = api.get(cluster, *ref)
        if obj is not None and controlled_by(obj, owner):
            found.append(obj)
    return found


def controlled_pods(api: Api, index: OwnerIndex, cluster: str, owner: Obj) -> list[Obj]:
    """Pods whose controller is ``owner``."""
    return controlled(api, index, cluster, owner, "", "pods")


def selects(selector: dict[str, str] | None, labels: dict[str, str] | None) -> bool:
    """An equality map selector (a Service's ``selector``, a ``nodeSelector``) matches the labels.

    An empty selector matches everything; callers for which it selects nothing check first.
    """
    return LabelSelector.from_dict({"matchLabels": selector or {}}).matches(labels or {})
