"""Garbage collection by ownerReferences, as kube-controller-manager's garbage collector does it.

- Background: once an owner is gone, a dependent none of whose other owners exists is deleted;
  one that still has an existing owner only loses the reference. A dependent created with
  references to owners that are all absent is deleted too.
- Foreground: an owner that is being deleted with the ``foregroundDeletion`` finalizer has its
  dependents deleted first (those that have dependents of their own in the foreground as well);
  the finalizer is removed once no dependent with ``blockOwnerDeletion`` is left.
- Orphan: an owner being deleted with the ``orphan`` finalizer has its reference removed from
  every dependent, then the finalizer removed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from syncflow.devcluster.simulate.api import Api
from syncflow.devcluster.simulate.owners import OwnerIndex, Ref, owner_references
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"


def _finalizers(obj: Obj) -> list[str]:
    return list(obj["metadata"].get("finalizers") or [])


def _deleting_with(obj: Obj, finalizer: str) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp")) and finalizer in _finalizers(obj)


class GarbageCollector:
    """Reacts to writes and removals; does its work in bounded passes from the work queue."""

    def __init__(self, api: Api, index: OwnerIndex, enqueue: Callable[[Hashable], None], writes: int) -> None:
        self.api = api
        self.index = index
        self.enqueue = enqueue
        self.writes = writes
        self._waiting: dict[tuple[str, str], Ref] = {}  # (cluster, uid) of owners deleting in the foreground

    # ----- events -----

    def observed_write(self, cluster: str, ref: Ref, new: Obj, old: Obj | None) -> None:
        """Queue what a stored change means for the collector."""
        meta = new["metadata"]
        if meta.get("deletionTimestamp") and {FOREGROUND, ORPHAN} & set(meta.get("finalizers") or ()):
            self.enqueue(("gc-owner", cluster, *ref))
        refs = owner_references(new)
        if refs and refs != owner_references(old):
            self.enqueue(("gc-dependent", cluster, *ref))
        if meta.get("deletionTimestamp") and refs:
            self._wake_owners(cluster, refs)

    def observed_remove(self, cluster: str, obj: Obj) -> None:
        """Queue what a removal means: its dependents lost an owner; a waiting owner lost a dependent."""
        uid = str(obj["metadata"].get("uid", ""))
        self._waiting.pop((cluster, uid), None)
        if self.index.has_dependents(cluster, uid):
            self.enqueue(("gc-absent", cluster, uid))
        self._wake_owners(cluster, owner_references(obj))

    def _wake_owners(self, cluster: str, refs: list[Obj]) -> None:
        for r in refs:
            waiting = self._waiting.get((cluster, str(r.get("uid"))))
            if waiting is not None:
                self.enqueue(("gc-owner", cluster, *waiting))

    # ----- work -----

    def _get(self, cluster: str, ref: Ref) -> Obj | None:
        return self.api.get(cluster, *ref)

    def _owner_exists(self, cluster: str, namespace: str, r: Obj) -> bool:
        rtype = self.api.type_of_kind(cluster, str(r.get("apiVersion", "")), str(r.get("kind", "")))
        if rtype is None:
            return True  # a kind this cluster does not serve cannot be looked up: never collect for it
        owner = self.api.get(
            cluster, rtype.group, rtype.plural, namespace if rtype.namespaced else "", str(r.get("name"))
        )
        return owner is not None and owner["metadata"].get("uid") == r.get("uid")

    def _drop_owner(self, cluster: str, ref: Ref, dependent: Obj, uids: set[str]) -> None:
        """Remove references to ``uids``; delete the dependent when no reference is left."""
        kept = [r for r in owner_references(dependent) if r.get("uid") not in uids]
        if not kept:
            self.api.delete(cluster, ref[0], ref[1], dependent)
            return
        changed = deep_copy(dependent)
        changed["metadata"]["ownerReferences"] = kept
        self.api.replace(cluster, ref[0], ref[1], dependent, changed)

    def dependent(self, cluster: str, group: str, plural: str, namespace: str, name: str) -> None:
        """A dependent with new references: drop those whose owner does not exist."""
        ref = (group, plural, namespace, name)
        obj = self._get(cluster, ref)
        if obj is None or obj["metadata"].get("deletionTimestamp"):
            return
        absent = {
            str(r.get("uid")) for r in owner_references(obj) if not self._owner_exists(cluster, namespace, r)
        }
        if absent:
            self._drop_owner(cluster, ref, obj, absent)

    def absent(self, cluster: str, uid: str) -> None:
        """An owner is gone: its dependents lose the reference, or go when it was their last owner."""
        found = [
            (r, d) for r in self.index.dependents(cluster, uid) if (d := self._get(cluster, r)) is not None
        ]
        live = [(r, d) for r, d in found if not d["metadata"].get("deletionTimestamp")]
        for ref, obj in live[: self.writes]:
            others = [r for r in owner_references(obj) if r.get("uid") != uid]
            alive = {str(r.get("uid")) for r in others if self._owner_exists(cluster, ref[2], r)}
            self._drop_owner(cluster, ref, obj, {uid} | ({str(r.get("uid")) for r in others} - alive))
        if len(live) > self.writes:
            self.enqueue(("gc-absent", cluster, uid))

    def owner(self, cluster: str, group: str, plural: str, namespace: str, name: str) -> None:
        """An owner being deleted with ``orphan`` or ``foregroundDeletion``: one bounded pass."""
        ref = (group, plural, namespace, name)
        obj = self._get(cluster, ref)
        if obj is None:
            return
        uid = str(obj["metadata"]["uid"])
        dependents = [
            (r, d) for r in self.index.dependents(cluster, uid) if (d := self._get(cluster, r)) is not None
        ]
        if _deleting_with(obj, ORPHAN):
            for r, d in dependents[: self.writes]:
                changed = deep_copy(d)
                changed["metadata"]["ownerReferences"] = [
                    o for o in owner_references(d) if o.get("uid") != uid
                ]
                self.api.replace(cluster, r[0], r[1], d, changed)
            if len(dependents) <= self.writes:
                self._release(cluster, ref, obj, ORPHAN)
            else:
                self.enqueue(("gc-owner", cluster, *ref))
        elif _deleting_with(obj, FOREGROUND):
            self._waiting[(cluster, uid)] = ref
            pending = [(r, d) for r, d in dependents if not d["metadata"].get("deletionTimestamp")]
            for r, d in pending[: self.writes]:
                self._delete_in_foreground(cluster, r, d)
            if len(pending) > self.writes:
                self.enqueue(("gc-owner", cluster, *ref))
            blocking = [d for _, d in dependents if _blocks(d, uid)]
            if not blocking:
                self._waiting.pop((cluster, uid), None)
                self._release(cluster, ref, obj, FOREGROUND)

    def _delete_in_foreground(self, cluster: str, ref: Ref, obj: Obj) -> None:
        if self.index.has_dependents(cluster, str(obj["metadata"]["uid"])) and FOREGROUND not in _finalizers(
            obj
        ):
            marked = deep_copy(obj)
            marked["metadata"]["finalizers"] = [*_finalizers(obj), FOREGROUND]
            stored = self.api.replace(cluster, ref[0], ref[1], obj, marked)
            if stored is None:
                return
            obj = stored
        self.api.delete(cluster, ref[0], ref[1], obj)

    def _release(self, cluster: str, ref: Ref, obj: Obj, finalizer: str) -> None:
        released = deep_copy(obj)
        released["metadata"]["finalizers"] = [f for f in _finalizers(obj) if f != finalizer]
        self.api.replace(cluster, ref[0], ref[1], obj, released)


def _blocks(dependent: Obj, owner_uid: str) -> bool:
    return any(r.get("uid") == owner_uid and r.get("blockOwnerDeletion") for r in owner_references(dependent))
