"""Consequences of writes that kube-apiserver's built-in controllers take care of.

- A CRD that is written starts (or keeps) serving its resource; a deleted CRD removes its objects
  (honouring their finalizers) and stops serving the resource once they are gone.
- A deleted namespace turns ``Terminating``, deletes its contents (honouring finalizers) and is
  removed once empty.
"""

from __future__ import annotations

from syncflow.devcluster import kinds
from syncflow.devcluster.crud import Objects, Target
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.resources import ResourceType, crd_resource_type
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy

INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _is(rtype: ResourceType, group: str, plural: str) -> bool:
    return rtype.group == group and rtype.plural == plural


class Lifecycle:
    """Hooks run by :class:`Objects` after writes and removals."""

    def __init__(self, objects: Objects, registry: Registry) -> None:
        self.objects = objects
        self.registry = registry
        objects.on_write.append(self.after_write)
        objects.on_remove.append(self.after_remove)

    def target(self, cluster: str, rtype: ResourceType) -> Target:
        """A target at the preferred version of ``rtype``."""
        return Target(cluster, rtype, rtype.versions[0])

    def create_cluster(self, cluster: str, namespaces: tuple[str, ...] = INITIAL_NAMESPACES) -> None:
        """Give a new logical cluster its initial namespaces."""
        ns_type = self.registry.by_group_resource(cluster, "", "namespaces")
        assert ns_type is not None
        for name in namespaces:
            self.objects.create(self.target(cluster, ns_type), "", {"metadata": {"name": name}})

    def after_write(self, t: Target, new: Obj, old: Obj | None) -> None:
        """React to a stored create or update."""
        deleting = bool(new["metadata"].get("deletionTimestamp"))
        started_deleting = deleting and not (old or {}).get("metadata", {}).get("deletionTimestamp")
        if _is(t.rtype, kinds.CRD_GROUP, "customresourcedefinitions"):
            if not deleting:
                self.registry.register(t.cluster, crd_resource_type(new))
                return
            owner_key = _CRD
            namespace = None
        elif _is(t.rtype, "", "namespaces") and deleting:
            owner_key = _NAMESPACE
            namespace = new["metadata"]["name"]
        else:
            return
        if started_deleting:
            for rtype, obj in self._contents(t.cluster, new, namespace):
                if not obj["metadata"].get("deletionTimestamp"):
                    self.objects.mark_deleted(self.target(t.cluster, rtype), obj)
        self._finish_if_empty(t.cluster, owner_key, new["metadata"]["name"])

    def after_remove(self, t: Target, obj: Obj) -> None:
        """React to an object that is gone: a CRD stops serving, a namespace may become empty."""
        if _is(t.rtype, kinds.CRD_GROUP, "customresourcedefinitions"):
            spec = obj["spec"]
            self.registry.unregister(t.cluster, spec["group"], spec["names"]["plural"])
            self.objects.store.end_watches(t.cluster, spec["group"], spec["names"]["plural"])
            return
        if t.rtype.custom:
            self._finish_if_empty(t.cluster, _CRD, f"{t.rtype.plural}.{t.rtype.group}")
        namespace = obj["metadata"].get("namespace")
        if namespace:
            self._finish_if_empty(t.cluster, _NAMESPACE, namespace)

    def _contents(self, cluster: str, owner: Obj, namespace: str | None) -> list[tuple[ResourceType, Obj]]:
        """Objects that hold ``owner`` (a namespace, or a CRD when ``namespace`` is None)."""
        if namespace is not None:
            types = [t for t in self.registry.types(cluster) if t.namespaced]
        else:
            spec = owner["spec"]
            rtype = self.registry.by_group_resource(cluster, spec["group"], spec["names"]["plural"])
            types = [rtype] if rtype is not None else []
        return [
            (rtype, obj)
            for rtype in types
            for _, obj in self.objects.store.items(cluster, rtype.group, rtype.plural, namespace)
        ]

    def _finish_if_empty(self, cluster: str, owner_key: tuple[str, str], name: str) -> None:
        """Remove a deleting namespace or CRD once nothing it owns is left."""
        current = self.objects.store.get(cluster, *owner_key, "", name)
        if current is None or not current["metadata"].get("deletionTimestamp"):
            return
        namespace = name if owner_key == _NAMESPACE else None
        if self._contents(cluster, current, namespace):
            return
        owner_type = self.registry.by_group_resource(cluster, *owner_key)
        assert owner_type is not None
        t = self.target(cluster, owner_type)
        if namespace is not None and current.get("spec", {}).get("finalizers"):
            released = deep_copy(current)
            released["spec"]["finalizers"] = []
            self.objects.replace(t, current, released, "finalize")  # re-enters after_write, which removes it
        elif not current["metadata"].get("finalizers"):
            self.objects.remove(t, current)


_CRD = (kinds.CRD_GROUP, "customresourcedefinitions")
_NAMESPACE = ("", "namespaces")
