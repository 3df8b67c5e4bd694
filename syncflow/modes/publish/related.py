"""A PublishedResource's ``spec.related`` as the engine's related resources.

The origin side is ``kcp`` (the rule's source) or ``service`` (its target); each side's resource is
looked up in that side's discovery (the virtual workspace serves claimed resources once the
APIExport claims them), which gives the kind and scope api-syncagent takes from its REST mappers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.api.publishedresource import (
    ObjectLocator,
    PublishedResource,
    RegularExpression,
    RelatedResource,
)
from syncflow.sync.rule import (
    Locator,
    RegexRewrite,
    Related,
    RelatedSelector,
    RelatedWatch,
    Resource,
    Rewrite,
)
from syncflow.util.selectors import LabelSelector

Obj = dict[str, Any]
Discovery = Callable[[str], Obj]
"""GETs a discovery document (``/api/v1``, ``/apis/<group>/<version>``) of one side."""

LEGACY_KINDS = {"ConfigMap": "configmaps", "Secret": "secrets"}


class RelatedNotServedError(LookupError):
    """A related resource is not (yet) served on one side."""


def _dump(model: Any) -> Obj:
    dumped: Obj = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def origin_gvr(related: RelatedResource) -> tuple[str, str, str]:
    """(group, version, plural) on the origin side (the deprecated ``kind`` means core v1)."""
    if related.kind is not None:
        return "", "v1", LEGACY_KINDS[related.kind]
    return related.group or "", related.version or "", related.resource or ""


def destination_gvr(related: RelatedResource) -> tuple[str, str, str]:
    """(group, version, plural) on the destination side: the origin's with the projection's overrides."""
    group, version, plural = origin_gvr(related)
    projection = related.projection
    if projection is None:
        return group, version, plural
    return projection.group or group, projection.version or version, projection.resource or plural


def discover(discovery: Discovery, side: str, gvr: tuple[str, str, str]) -> Resource:
    """The resource ``gvr`` as ``side`` serves it (kind, scope, status subresource)."""
    group, version, plural = gvr
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    try:
        listed = discovery(path).get("resources") or []
    except ApiException as exc:
        if exc.status not in (403, 404):
            raise
        listed = []
    names = {r.get("name"): r for r in listed}
    found = names.get(plural)
    if found is None:
        gr = f"{plural}.{group}" if group else plural
        raise RelatedNotServedError(f"related resource {gr}/{version} is not served on the {side} side (yet)")
    return Resource(
        group=group,
        version=version,
        plural=plural,
        kind=str(found["kind"]),
        namespaced=bool(found.get("namespaced")),
        status_subresource=f"{plural}/status" in names,
    )


def _regex(regex: RegularExpression | None) -> RegexRewrite | None:
    if regex is None:
        return None
    return RegexRewrite(pattern=regex.pattern or "", replacement=regex.replacement or "")


def _locator(spec: ObjectLocator) -> Locator:
    if spec.reference is not None:
        return Locator(reference=spec.reference.path, regex=_regex(spec.reference.regex))
    if spec.selector is not None:
        selector = spec.selector
        rewrite = Rewrite(
            regex=_regex(selector.rewrite.regex),
            template=(selector.rewrite.template.template or "") if selector.rewrite.template else None,
        )
        expressions = [_dump(e) for e in selector.match_expressions or []]
        return Locator(
            selector=RelatedSelector(
                match_labels=dict(selector.match_labels or {}),
                match_expressions=str(LabelSelector.from_dict({"matchExpressions": expressions})),
                rewrite=rewrite,
            )
        )
    assert spec.template is not None
    return Locator(template=spec.template.template or "")


def _watch(related: RelatedResource) -> RelatedWatch | None:
    watch = related.watch
    if watch is None:
        return None
    if watch.by_selector is not None:
        return RelatedWatch(by_selector=str(LabelSelector.from_dict(_dump(watch.by_selector))))
    return RelatedWatch(by_owner=True)


def related_resources(
    published: PublishedResource, kcp: Discovery, service: Discovery
) -> tuple[Related, ...]:
    """The engine's view of ``spec.related``; raises :class:`RelatedNotServedError` for a missing resource."""
    out = []
    for related in published.spec.related or []:
        from_kcp = related.origin == "kcp"
        origin = discover(kcp if from_kcp else service, related.origin, origin_gvr(related))
        other = "service" if from_kcp else "kcp"
        destination = discover(service if from_kcp else kcp, other, destination_gvr(related))
        mutation = _dump(related.mutation).get("spec") if related.mutation else None
        out.append(
            Related(
                identifier=related.identifier,
                origin="source" if from_kcp else "target",
                origin_resource=origin,
                destination_resource=destination,
                object=_locator(related.object),
                namespace=_locator(related.object.namespace) if related.object.namespace else None,
                cleanup=bool(related.cleanup),
                sync_status=bool(related.sync_status),
                mutation=tuple(mutation or ()),
                watch=_watch(related),
            )
        )
    return tuple(out)
