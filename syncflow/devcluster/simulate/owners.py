"""ownerReferences: building them, reading them, and an index from owner uid to dependents."""

from __future__ import annotations

from syncflow.devcluster.store import Obj

Ref = tuple[str, str, str, str]
"""Where an object is: (group, plural, namespace, name)."""


def owner_reference(owner: Obj, *, controller: bool = True) -> Obj:
    """A reference to ``owner`` as its controller sets it on what it creates."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def owner_references(obj: Obj | None) -> list[Obj]:
    """The object's ownerReferences (none for None)."""
    if obj is None:
        return []
    return list(obj["metadata"].get("ownerReferences") or [])


def controller_of(obj: Obj | None) -> Obj | None:
    """The ownerReference marked ``controller``, if any."""
    return next((r for r in owner_references(obj) if r.get("controller")), None)


def controlled_by(obj: Obj, owner: Obj) -> bool:
    """True if ``owner`` is the controller of ``obj``."""
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == owner["metadata"]["uid"]


class OwnerIndex:
    """(cluster, owner uid) -> dependents, kept up to date from every write and removal."""

    def __init__(self) -> None:
        self._dependents: dict[tuple[str, str], set[Ref]] = {}

    def dependents(self, cluster: str, uid: str) -> list[Ref]:
        """Where the dependents of an owner are (sorted, so work is deterministic)."""
        return sorted(self._dependents.get((cluster, uid), ()))

    def has_dependents(self, cluster: str, uid: str) -> bool:
        """True if any object names ``uid`` as an owner."""
        return (cluster, uid) in self._dependents

    def update(self, cluster: str, ref: Ref, new: Obj | None, old: Obj | None) -> None:
        """Record a change of an object (``new`` None: removed)."""
        if not owner_references(new) and not owner_references(old):
            return  # the common case, kept cheap: most objects have no owner
        before = {str(r.get("uid")) for r in owner_references(old)}
        after = {str(r.get("uid")) for r in owner_references(new)}
        for uid in before - after:
            found = self._dependents.get((cluster, uid))
            if found is not None:
                found.discard(ref)
                if not found:
                    del self._dependents[(cluster, uid)]
        for uid in after - before:
            self._dependents.setdefault((cluster, uid), set()).add(ref)
