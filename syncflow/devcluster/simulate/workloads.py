"""What every workload controller needs: its shape, the pods it controls, and selector matching."""

from __future__ import annotations

from typing import ClassVar

from syncflow.devcluster.simulate.api import Api
from syncflow.devcluster.simulate.config import SimulationConfig
from syncflow.devcluster.simulate.owners import OwnerIndex, controlled_by
from syncflow.devcluster.store import Obj
from syncflow.util.selectors import LabelSelector


class WorkloadController:
    """A simulated controller of one kind (``group``/``plural``): the object API, the owner index and
    the simulation's limits."""

    group: ClassVar[str]
    plural: ClassVar[str]

    def __init__(self, api: Api, index: OwnerIndex, config: SimulationConfig) -> None:
        self.api = api
        self.index = index
        self.config = config

    def live(self, cluster: str, namespace: str, name: str) -> Obj | None:
        """The object to reconcile; None when it is gone or being deleted."""
        obj = self.api.get(cluster, self.group, self.plural, namespace, name)
        if obj is None or obj["metadata"].get("deletionTimestamp"):
            return None
        return obj


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
