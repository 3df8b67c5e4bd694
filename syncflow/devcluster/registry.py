"""Which resource types each logical cluster serves: the built-in ones plus its CRDs."""

from __future__ import annotations

from collections.abc import Iterator

from syncflow.devcluster.resources import BUILTIN_TYPES, GROUP_ORDER, ResourceType

_BUILTIN_BY_RESOURCE = {(t.group, t.plural): t for t in BUILTIN_TYPES}


class Registry:
    """Resource types per logical cluster; built-in types are served in every cluster."""

    def __init__(self) -> None:
        self._custom: dict[str, dict[tuple[str, str], ResourceType]] = {}

    def lookup(self, cluster: str, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at ``group/version/plural``, if any."""
        found = _BUILTIN_BY_RESOURCE.get((group, plural)) or self._custom.get(cluster, {}).get(
            (group, plural)
        )
        if found is None or version not in found.versions:
            return None
        return found

    def by_group_resource(self, cluster: str, group: str, plural: str) -> ResourceType | None:
        """The type of ``plural.group`` whatever its version."""
        return _BUILTIN_BY_RESOURCE.get((group, plural)) or self._custom.get(cluster, {}).get((group, plural))

    def types(self, cluster: str) -> Iterator[ResourceType]:
        """All types served in ``cluster``: built-in first, then custom ones by group."""
        yield from BUILTIN_TYPES
        yield from sorted(self._custom.get(cluster, {}).values(), key=lambda t: (t.group, t.plural))

    def group_versions(self, cluster: str) -> dict[str, list[str]]:
        """Group -> served versions (preferred first), in discovery order."""
        groups: dict[str, list[str]] = {}
        for t in self.types(cluster):
            versions = groups.setdefault(t.group, [])
            versions.extend(v for v in t.versions if v not in versions)
        order = {g: i for i, g in enumerate(GROUP_ORDER)}
        return dict(sorted(groups.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))

    def register(self, cluster: str, rtype: ResourceType) -> None:
        """Serve a custom type (replacing an earlier definition of the same group/resource)."""
        self._custom.setdefault(cluster, {})[(rtype.group, rtype.plural)] = rtype

    def unregister(self, cluster: str, group: str, plural: str) -> None:
        """Stop serving a custom type."""
        self._custom.get(cluster, {}).pop((group, plural), None)

    def is_builtin(self, group: str, plural: str) -> bool:
        """True for a type compiled into the server."""
        return (group, plural) in _BUILTIN_BY_RESOURCE
