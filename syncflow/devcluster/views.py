"""Views: what one request path can see — resource types, clusters, objects — and may do.

A plain devcluster has one view of its one cluster. kcp mode adds the wildcard view
(``/clusters/*``) and the APIExport virtual workspace, which see several clusters through one URL.
"""

from __future__ import annotations

from collections.abc import Iterator

from syncflow.devcluster import errors
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.resources import ResourceType
from syncflow.devcluster.store import Obj


class View:
    """One cluster, or with ``cluster=None`` every cluster (then only list and watch are allowed)."""

    def __init__(self, registry: Registry, cluster: str | None) -> None:
        self.registry = registry
        self.cluster = cluster

    def types(self) -> Iterator[ResourceType]:
        """Resource types served through this view (discovery and OpenAPI)."""
        return self.registry.types(self.cluster)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at ``group/version/plural``."""
        return self.registry.lookup(self.cluster, group, version, plural)

    def authorize(self, verb: str, rtype: ResourceType, namespace: str | None) -> None:
        """Raise a StatusError if ``verb`` on ``rtype`` is not allowed here."""
        if self.cluster is None and verb not in ("list", "watch"):
            raise errors.method_not_allowed(
                f'{verb} is not allowed in the "*" logical cluster: only list and watch are'
            )

    def visible(self, cluster: str, rtype: ResourceType, obj: Obj) -> bool:
        """Whether this view shows ``obj`` (stored in ``cluster``)."""
        return True

    def present(self, cluster: str, obj: Obj) -> Obj:
        """The object as this view returns it."""
        return obj
