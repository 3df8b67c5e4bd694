"""Dry run (``?dryRun=All``): writes that are answered but not kept.

While a dry-run request runs (:meth:`syncflow.devcluster.crud.Objects.dry_run`), defaulting,
admission and validation happen as for a real write, but the final store write is replaced by the
functions here: nothing is stored, the resourceVersion does not move, no watch event is sent, and
the hooks that follow a stored write (lifecycle and kcp controllers) do not run.
"""

from __future__ import annotations

from syncflow.devcluster.store import Obj


def would_put(obj: Obj, old: Obj | None) -> Obj:
    """``obj`` as a write would return it: new objects have no resourceVersion, changed ones keep theirs."""
    if old is None:
        obj["metadata"].pop("resourceVersion", None)
    else:
        obj["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
    return obj


def would_remove(obj: Obj) -> Obj:
    """``obj`` as a deletion would return it."""
    return obj
