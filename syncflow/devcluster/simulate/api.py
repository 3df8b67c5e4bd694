"""The simulation's access to objects: the same object layer (and so the same rules, hooks, watch
events and resourceVersions) as API requests, with refused writes logged instead of raised."""

from __future__ import annotations

import logging

from syncflow.devcluster.crud import Objects, Target
from syncflow.devcluster.errors import StatusError
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.resources import ResourceType
from syncflow.devcluster.store import Obj
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.devcluster.simulate")


def api_group(api_version: str) -> str:
    """The group of an ``apiVersion`` ('' for the core group)."""
    return api_version.rpartition("/")[0]


class Api:
    """Reads from the store and writes through :class:`Objects` in one logical cluster at a time."""

    def __init__(self, objects: Objects, registry: Registry) -> None:
        self.objects = objects
        self.registry = registry

    def get(self, cluster: str, group: str, plural: str, namespace: str, name: str) -> Obj | None:
        """One object, or None."""
        return self.objects.store.get(cluster, group, plural, namespace, name)

    def items(self, cluster: str, group: str, plural: str, namespace: str | None) -> list[Obj]:
        """Objects of a resource in a namespace (None: everywhere)."""
        return [obj for _, obj in self.objects.store.items(cluster, group, plural, namespace)]

    def type_of_kind(self, cluster: str, api_version: str, kind: str) -> ResourceType | None:
        """The served type of an ``apiVersion``/``kind`` pair, as ownerReferences name it."""
        group = api_group(api_version)
        return next((t for t in self.registry.types(cluster) if t.group == group and t.kind == kind), None)

    def _target(self, cluster: str, group: str, plural: str) -> Target | None:
        rtype = self.registry.by_group_resource(cluster, group, plural)
        return None if rtype is None else Target(cluster, rtype, rtype.versions[0])

    def create(self, cluster: str, group: str, plural: str, namespace: str, body: Obj) -> Obj | None:
        """Create an object; None when the server refuses (e.g. a terminating namespace)."""
        t = self._target(cluster, group, plural)
        if t is None:
            return None
        try:
            return self.objects.create(t, namespace, body)
        except StatusError as exc:
            _refused("create", plural, namespace, str(body["metadata"].get("name", "")), exc)
            return None

    def replace(
        self, cluster: str, group: str, plural: str, old: Obj, new: Obj, subresource: str = ""
    ) -> Obj | None:
        """Store ``new`` in place of ``old`` (``subresource='status'`` for a status write)."""
        t = self._target(cluster, group, plural)
        if t is None:
            return None
        try:
            return self.objects.replace(t, old, new, subresource)
        except StatusError as exc:
            meta = old["metadata"]
            _refused("update", plural, meta.get("namespace", ""), meta["name"], exc)
            return None

    def delete(self, cluster: str, group: str, plural: str, obj: Obj) -> None:
        """Delete an object (finalizers hold it as they would an API delete)."""
        t = self._target(cluster, group, plural)
        meta = obj["metadata"]
        if t is None or meta.get("deletionTimestamp"):
            return
        try:
            self.objects.delete(t, meta.get("namespace", ""), meta["name"], {})
        except StatusError as exc:
            _refused("delete", plural, meta.get("namespace", ""), meta["name"], exc)


def _refused(verb: str, plural: str, namespace: str, name: str, exc: StatusError) -> None:
    log_event(
        logger,
        "simulate.write.refused",
        verb=verb,
        resource=plural,
        namespace=namespace,
        name=name,
        code=exc.code,
        error=str(exc),
    )
