"""Parsing of Kubernetes API paths into what they address."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ApiPath:
    """A path under ``/api/v1`` or ``/apis/<group>/<version>``.

    ``resource`` is empty for the group-version's discovery document; ``namespace`` is None when
    the path has no ``namespaces/<ns>/`` part.
    """

    group: str
    version: str
    resource: str = ""
    namespace: str | None = None
    name: str = ""
    subresource: str = ""


@dataclass(frozen=True)
class DiscoveryPath:
    """``/api`` (group is None), ``/apis`` (group is ''), or ``/apis/<group>``."""

    group: str | None


def parse(segments: list[str]) -> ApiPath | DiscoveryPath | None:
    """Parse path segments (after any ``/clusters/<name>`` prefix); None if not an API path."""
    if not segments:
        return None
    head, rest = segments[0], segments[1:]
    if head == "api":
        if not rest:
            return DiscoveryPath(None)
        group, version, rest = "", rest[0], rest[1:]
    elif head == "apis":
        if len(rest) < 2:
            return DiscoveryPath(rest[0] if rest else "")
        group, version, rest = rest[0], rest[1], rest[2:]
    else:
        return None
    if not rest:
        return ApiPath(group, version)
    namespace: str | None = None
    namespace_subresource = len(rest) == 3 and rest[0] == "namespaces" and rest[2] in ("status", "finalize")
    if rest[0] == "namespaces" and len(rest) >= 3 and not namespace_subresource:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3 or not all(rest):
        return None
    return ApiPath(
        group,
        version,
        resource=rest[0],
        namespace=namespace,
        name=rest[1] if len(rest) > 1 else "",
        subresource=rest[2] if len(rest) > 2 else "",
    )
