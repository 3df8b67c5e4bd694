"""API servers in memory for the engine's table tests (as api-syncagent tests its syncer against a fake
client): objects by path, resourceVersions and uids, 404s that name the object, 409s on create and on
a stale conditional write, LISTs by label selector, merge and JSON patches, status writes. Every
request is counted by method, so a case can say exactly what a situation costs.

A path is a collection when it ends in a plural (``/api/v1/namespaces/team/secrets``,
``/apis/g/v/things``); any other GET is of one object.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.util.selectors import LabelSelector

Obj = dict[str, Any]


def api_error(status: int, name: str = "") -> ApiException:
    """The ApiException a client raises for ``status``; a 404 with ``name`` says that object is missing."""
    error = ApiException(status=status, reason={404: "Not Found", 409: "Conflict"}.get(status, ""))
    error.body = json.dumps({"kind": "Status", "code": status, "details": {"name": name}})
    return error


def is_collection(path: str) -> bool:
    """Whether ``path`` names a collection (all namespaces', or one namespace's), not an object."""
    parts = path.strip("/").split("/")
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        return len(rest) == 3
    return len(rest) == 1


def in_collection(path: str, collection: str) -> bool:
    """Whether the object at ``path`` is listed by ``collection`` (a namespace's, or every namespace's)."""
    parent = path.rsplit("/", 1)[0]
    return parent == collection or re.sub(r"/namespaces/[^/]+/", "/", parent) == collection


def merged(target: Any, patch: Any) -> Any:
    """A JSON merge patch (RFC 7386) applied to ``target``."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merged(out.get(key), value)
    return out


@dataclass
class FakeApi:
    """One API server in memory; ``calls`` counts requests by method (GET, POST, PATCH, PUT, DELETE)."""

    objects: dict[str, Obj] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)
    versions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    host: str = "fake"

    def put(self, path: str, obj: Obj) -> Obj:
        """Store ``obj`` at ``path`` as the server would (a new resourceVersion; a uid once); no request."""
        stored = copy.deepcopy(obj)
        meta = stored.setdefault("metadata", {})
        meta["resourceVersion"] = str(next(self.versions))
        meta.setdefault("uid", f"uid-{meta['resourceVersion']}")
        self.objects[path] = stored
        return copy.deepcopy(stored)

    def get(self, path: str, **query: str) -> Obj:
        self.calls["GET"] += 1
        if path in self.objects:
            return copy.deepcopy(self.objects[path])
        if is_collection(path):
            wanted = LabelSelector.parse(query.get("labelSelector", ""))
            items = [
                copy.deepcopy(o)
                for p, o in sorted(self.objects.items())
                if in_collection(p, path) and wanted.matches(o["metadata"].get("labels") or {})
            ]
            return {"items": items[: int(query["limit"])] if "limit" in query else items}
        raise api_error(404, path.rsplit("/", 1)[-1])

    def create(self, path: str, body: Obj) -> Obj:
        self.calls["POST"] += 1
        target = f"{path}/{body['metadata']['name']}"
        if target in self.objects:
            raise api_error(409, body["metadata"]["name"])
        return self.put(target, body)

    def merge_patch(self, path: str, patch: Obj) -> Obj:
        self.calls["PATCH"] += 1
        existing = self._existing(path)
        wanted_version = (patch.get("metadata") or {}).get("resourceVersion")
        if wanted_version not in (None, existing["metadata"]["resourceVersion"]):
            raise api_error(409, existing["metadata"]["name"])
        return self.put(path, merged(existing, patch))

    def json_patch(self, path: str, operations: list[Obj]) -> Obj:
        self.calls["PATCH"] += 1
        obj = self._existing(path.removesuffix("/status"))
        for operation in operations:
            assert operation["op"] == "add" and operation["path"] == "/status", operation
            obj["status"] = operation["value"]
        return self.put(path.removesuffix("/status"), obj)

    def replace(self, path: str, body: Obj) -> Obj:
        self.calls["PUT"] += 1
        target = path.removesuffix("/status")
        existing = self._existing(target)
        if body["metadata"].get("resourceVersion") not in (None, existing["metadata"]["resourceVersion"]):
            raise api_error(409, existing["metadata"]["name"])
        if path.endswith("/status"):
            return self.put(target, {**existing, "status": body.get("status")})
        return self.put(target, body)

    def delete(self, path: str, body: Obj | None = None, **query: str) -> Obj:
        self.calls["DELETE"] += 1
        obj = self._existing(path)
        uid = ((body or {}).get("preconditions") or {}).get("uid")
        if uid not in (None, obj["metadata"]["uid"]):
            raise api_error(409, obj["metadata"]["name"])
        del self.objects[path]
        return obj

    def _existing(self, path: str) -> Obj:
        if path not in self.objects:
            raise api_error(404, path.rsplit("/", 1)[-1])
        return copy.deepcopy(self.objects[path])


@dataclass
class FakeEndpoints:
    """A source and a target API server (the endpoint names ``source`` and anything else)."""

    source: FakeApi = field(default_factory=FakeApi)
    target: FakeApi = field(default_factory=FakeApi)

    def api(self, endpoint: str, cluster: str) -> FakeApi:
        return self.source if endpoint == "source" else self.target

    def everywhere(self, endpoint: str) -> list[FakeApi]:
        return [self.api(endpoint, "")]

    def clear_calls(self) -> None:
        self.source.calls.clear()
        self.target.calls.clear()

    @property
    def calls(self) -> Counter[str]:
        """Both sides' requests."""
        return self.source.calls + self.target.calls
