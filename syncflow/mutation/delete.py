"""``delete{path}``: removes the value at path (a missing one is no error)."""

from __future__ import annotations

from syncflow.mutation import paths
from syncflow.mutation.base import Context, Obj


class Delete:
    """Removes the value at ``path`` (sjson's ``Delete``)."""

    def __init__(self, path: str) -> None:
        self.path = paths.parse(path)

    def apply(self, obj: Obj, context: Context) -> Obj:
        result: Obj = paths.delete(obj, self.path)
        return result
