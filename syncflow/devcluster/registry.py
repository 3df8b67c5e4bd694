"""Which resource types each logical cluster serves: the built-in ones plus its CRDs."""

from __future__ import annotations

from collections.abc import Iterator

from syncflow.devcluster.resources import ResourceType


class Registry:
    """Resource types per logical cluster; built-in types are served in every cluster."""

    def __init__(self, builtins: tuple[ResourceType, ...]) -> None:
        self._builtins = builtins
        self._builtin_by_resource = {(t.group, t.plural): t for t in self._builtins}
        self._custom: dict[str, dict[tuple[str, str], ResourceType]] = {}

    def lookup(self, cluster: str | None, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at ``group/version/plural`` (``cluster=None``: in any cluster)."""
        found = self._builtin_by_resource.get((group, plural))
        if found is None:
            clusters = [self._custom.get(cluster, {})] if cluster is not None else self._custom.values()
            found = next((c[(group, plural)] for c in clusters if (group, plural) in c), None)
        if found is None or version not in found.versions:
            return None
        return found

    def by_group_resource(self, cluster: str, group: str, plural: str) -> ResourceType | None:
        """The type of ``plural.group`` whatever its version."""
        return self._builtin_by_resource.get((group, plural)) or self._custom.get(cluster, {}).get(
            (group, plural)
        )

    def types(self, cluster: str | None) -> Iterator[ResourceType]:
        """Types served in ``cluster`` (``None``: the built-in ones): built-in first, then custom ones."""
        yield from self._builtins
        custom = self._custom.get(cluster, {}) if cluster is not None else {}
        yield from sorted(custom.values(), key=lambda t: (t.group, t.plural))

    def register(self, cluster: str, rtype: ResourceType) -> None:
        """Serve a custom type (replacing an earlier definition of the same group/resource)."""
        self._custom.setdefault(cluster, {})[(rtype.group, rtype.plural)] = rtype

    def unregister(self, cluster: str, group: str, plural: str) -> None:
        """Stop serving a custom type."""
        self._custom.get(cluster, {}).pop((group, plural), None)

    def is_builtin(self, group: str, plural: str) -> bool:
        """True for a type compiled into the server."""
        return (group, plural) in self._builtin_by_resource
