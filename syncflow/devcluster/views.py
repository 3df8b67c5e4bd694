"""Views: what one request path can see — resource types, clusters, objects — and may do.

A plain devcluster has one view of its one cluster. kcp mode adds the wildcard view
(``/clusters/*``) and the APIExport virtual workspace, which see several clusters through one URL.
"""

from __future__ import annotations

from collections.abc import Iterator

from syncflow.devcluster import errors, rbac
from syncflow.devcluster.rbac import ADMIN_IDENTITY, Identity
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.resources import ResourceType
from syncflow.devcluster.store import Obj, Store


class View:
    """One cluster, or with ``cluster=None`` every cluster (then only list and watch are allowed).

    ServiceAccount identities are held to the RBAC objects of the cluster; other identities of a
    plain server may do everything (see docs/devcluster.md).
    """

    def __init__(
        self,
        registry: Registry,
        cluster: str | None,
        identity: Identity = ADMIN_IDENTITY,
        store: Store | None = None,
    ) -> None:
        self.registry = registry
        self.cluster = cluster
        self.identity = identity
        self.store = store

    def types(self) -> Iterator[ResourceType]:
        """Resource types served through this view (discovery and OpenAPI)."""
        return self.registry.types(self.cluster)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at ``group/version/plural``."""
        return self.registry.lookup(self.cluster, group, version, plural)

    def held_to_rbac(self) -> bool:
        """Whether this view checks the identity's requests against RBAC."""
        return self.identity.service_account is not None

    def authorize_discovery(self) -> None:
        """Raise a StatusError if the identity may not read discovery and OpenAPI documents here."""

    def authorize(
        self, verb: str, rtype: ResourceType, namespace: str | None, name: str = "", subresource: str = ""
    ) -> None:
        """Raise a StatusError if ``verb`` on ``rtype`` is not allowed here."""
        if self.cluster is None and verb not in ("list", "watch"):
            raise errors.method_not_allowed(
                f'{verb} is not allowed in the "*" logical cluster: only list and watch are'
            )
        resource = f"{rtype.plural}/{subresource}" if subresource else rtype.plural
        if self.cluster is not None and not self.allows(verb, rtype.group, resource, name, namespace):
            raise errors.forbidden(self.denial(verb, rtype, resource, name, namespace))

    def allows(
        self, verb: str, group: str, resource: str, name: str = "", namespace: str | None = None
    ) -> bool:
        """Whether the identity may ``verb`` the resource (``plural`` or ``plural/subresource``) here."""
        if self.cluster is None or self.store is None or not self.held_to_rbac():
            return True
        return rbac.allowed(self.store, self.cluster, self.identity, verb, group, resource, name, namespace)

    def denial(self, verb: str, rtype: ResourceType, resource: str, name: str, namespace: str | None) -> str:
        """The message of a 403 for an RBAC denial."""
        return rbac.forbidden_message(self.identity, verb, rtype.group, resource, name, namespace)

    def visible(self, cluster: str, rtype: ResourceType, obj: Obj) -> bool:
        """Whether this view shows ``obj`` (stored in ``cluster``)."""
        return True

    def present(self, cluster: str, obj: Obj) -> Obj:
        """The object as this view returns it."""
        return obj
