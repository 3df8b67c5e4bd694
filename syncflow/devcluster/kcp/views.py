"""What kcp URLs see: one workspace, every workspace (``*``), or an APIExport's virtual workspace."""

from __future__ import annotations

from collections.abc import Iterator

from syncflow.devcluster import errors, rbac
from syncflow.devcluster.kcp.apis import APIs
from syncflow.devcluster.kcp.hashes import (
    CLUSTER_ANNOTATION,
    EXPORT_LABEL,
    claim_hash,
    claim_label,
    export_hash,
)
from syncflow.devcluster.kcp.types import APIS, schema_resource_type
from syncflow.devcluster.rbac import Identity
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.resources import ResourceType
from syncflow.devcluster.store import Obj
from syncflow.devcluster.views import View

_READ = ("get", "list", "watch")


def annotate(cluster: str, obj: Obj) -> Obj:
    """``obj`` with the ``kcp.io/cluster`` annotation kcp sets on everything it returns."""
    meta = obj["metadata"]
    return {
        **obj,
        "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}), CLUSTER_ANNOTATION: cluster}},
    }


class WorkspaceView(View):
    """A workspace (or ``*``) through its normal URL; non-admin identities are held to RBAC."""

    def __init__(self, registry: Registry, apis: APIs, cluster: str | None, identity: Identity) -> None:
        super().__init__(registry, cluster, identity, apis.store)
        self.apis = apis

    def held_to_rbac(self) -> bool:
        """Every identity but the admin."""
        return not self.identity.is_admin

    def authorize(
        self, verb: str, rtype: ResourceType, namespace: str | None, name: str = "", subresource: str = ""
    ) -> None:
        """Wildcard requests are list/watch for admins; others need an RBAC grant in the workspace."""
        super().authorize(verb, rtype, namespace, name, subresource)
        if self.cluster is None and not self.identity.is_admin:
            raise errors.forbidden(self.denial(verb, rtype, rtype.plural, name, namespace))

    def denial(self, verb: str, rtype: ResourceType, resource: str, name: str, namespace: str | None) -> str:
        """kcp names the workspace."""
        where = "the * logical cluster" if self.cluster is None else f'workspace "{self.cluster}"'
        return (
            f'{rtype.group_resource} is forbidden: User "{self.identity.user}" cannot {verb} resource '
            f'"{resource}" in API group "{rtype.group}" in {where}'
        )

    def present(self, cluster: str, obj: Obj) -> Obj:
        """Every object carries ``kcp.io/cluster``."""
        return annotate(cluster, obj)


class ExportView(View):
    """The APIExport virtual workspace for one logical cluster that binds the export, or ``*``."""

    def __init__(
        self,
        registry: Registry,
        apis: APIs,
        export_cluster: str,
        export: Obj,
        cluster: str | None,
        identity: Identity,
    ) -> None:
        super().__init__(registry, cluster, identity, apis.store)
        self.apis = apis
        self.export_cluster = export_cluster
        self.export = export
        self.export_name = str(export["metadata"]["name"])
        self.claim_label = claim_label(export_cluster, self.export_name)
        self._exported = [schema_resource_type(s) for s in apis.export_schemas(export_cluster, export)]
        self._claimed = list(self._claimed_types())
        bindings_type = registry.by_group_resource(export_cluster, APIS, "apibindings")
        assert bindings_type is not None
        self._bindings_type = bindings_type

    def _claimed_types(self) -> Iterator[tuple[ResourceType, str]]:
        exported = {(t.group, t.plural) for t in self._exported}
        for claim in (self.export.get("spec") or {}).get("permissionClaims") or []:
            group, plural, identity = (
                claim.get("group", ""),
                claim.get("resource", ""),
                claim.get("identityHash", ""),
            )
            if (group, plural) in exported:
                continue
            if identity:
                schema = self.apis.schema_by_identity(group, plural, identity)
                rtype = schema_resource_type(schema) if schema else None
            else:
                rtype = self.registry.by_group_resource(self.export_cluster, group, plural)
                rtype = rtype if rtype is not None and self.registry.is_builtin(group, plural) else None
            if rtype is not None:
                yield rtype, identity
                if (group, plural) == ("", "events"):
                    other = self.registry.by_group_resource(self.export_cluster, "events.k8s.io", "events")
                    if other is not None:
                        yield other, identity

    def types(self) -> Iterator[ResourceType]:
        """The export's resources, its claimed resources and (read-only) APIBindings."""
        yield from self._exported
        yield from (t for t, _ in self._claimed)
        yield self._bindings_type

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        """A type this virtual workspace serves at ``group/version/plural``."""
        return next(
            (t for t in self.types() if (t.group, t.plural) == (group, plural) and version in t.versions),
            None,
        )

    def _is_exported(self, rtype: ResourceType) -> bool:
        return any((t.group, t.plural) == (rtype.group, rtype.plural) for t in self._exported)

    def _claim_identity(self, rtype: ResourceType) -> str:
        return next(i for t, i in self._claimed if (t.group, t.plural) == (rtype.group, rtype.plural))

    def _require_content_permission(self, verb: str) -> None:
        if not rbac.allowed(
            self.apis.store,
            self.export_cluster,
            self.identity,
            verb,
            APIS,
            "apiexports/content",
            self.export_name,
        ):
            raise errors.forbidden(
                f'User "{self.identity.user}" cannot {verb} resource "apiexports/content" in API group '
                f'"{APIS}" for APIExport "{self.export_name}"'
            )

    def held_to_rbac(self) -> bool:
        """Requests are held to the content permission and the bindings, not to the workspaces' RBAC."""
        return False

    def authorize_discovery(self) -> None:
        """Discovery needs the content permission too, as kcp's virtual workspace requires."""
        self._require_content_permission("get")

    def authorize(
        self, verb: str, rtype: ResourceType, namespace: str | None, name: str = "", subresource: str = ""
    ) -> None:
        """The content permission, the wildcard rules, and per-cluster binding and claim checks."""
        self._require_content_permission(verb)
        if self.cluster is None:
            super().authorize(verb, rtype, namespace)
            if namespace is not None:
                raise errors.bad_request("cross-cluster LIST and WATCH are required to be cross-namespace")
            return
        binding = self.apis.binding_for(self.cluster, self.export_cluster, self.export_name)
        if binding is None:
            export = f"{self.export_cluster}:{self.export_name}"
            raise errors.forbidden(f'workspace "{self.cluster}" does not bind APIExport "{export}"')
        if rtype is self._bindings_type:
            if verb not in _READ:
                raise errors.forbidden(f"apibindings.{APIS} are read-only in the virtual workspace")
        elif not self._is_exported(rtype) and not self.apis.claimed_type_allowed(
            binding, rtype.group, rtype.plural, self._claim_identity(rtype)
        ):
            raise errors.forbidden(
                f'{rtype.group_resource} is forbidden: the APIBinding in workspace "{self.cluster}" has not '
                f"accepted the permission claim"
            )

    def visible(self, cluster: str, rtype: ResourceType, obj: Obj) -> bool:
        """Objects of binding workspaces only: bound by this export, or labelled for its claims."""
        labels = obj["metadata"].get("labels") or {}
        if rtype is self._bindings_type:
            return labels.get(EXPORT_LABEL) == export_hash(self.export_cluster, self.export_name)
        if self.apis.binding_for(cluster, self.export_cluster, self.export_name) is None:
            return False
        if self._is_exported(rtype):
            holder = self.apis.bound.get((cluster, rtype.group, rtype.plural))
            return holder is not None and (holder.export_cluster, holder.export_name) == (
                self.export_cluster,
                self.export_name,
            )
        group = "" if (rtype.group, rtype.plural) == ("events.k8s.io", "events") else rtype.group
        wanted = claim_hash(group, rtype.plural, self._claim_identity(rtype))
        return labels.get(self.claim_label) == wanted

    def present(self, cluster: str, obj: Obj) -> Obj:
        """Every object carries ``kcp.io/cluster``."""
        return annotate(cluster, obj)
