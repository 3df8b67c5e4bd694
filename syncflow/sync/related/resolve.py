"""Finding a primary object's related objects and naming their copies, as api-syncagent resolves them
(``syncer_related.go``): first the namespaces, then the objects in each, as pairs origin → destination.

Pure functions of the primary object on both sides; label selectors list through a ``Lister``. Names
from references and templates are known before the objects exist, which is how the related index
learns which object a primary waits for (e.g. the Secret cert-manager has not created yet).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from syncflow.gocompat.goregexp import RegexpError, compile_regexp
from syncflow.mutation import gjson, paths
from syncflow.mutation.base import MutationError
from syncflow.sync.naming import RENDER_LIMIT
from syncflow.sync.rule import Locator, RegexRewrite, Related, RelatedSelector, Rewrite
from syncflow.templating import Struct, Template, TemplateError, compile_template
from syncflow.util.selectors import LabelSelector, SelectorError

Obj = dict[str, Any]
Lister = Callable[[str, str], list[Obj]]
"""Lists the origin side: (collection path, label selector) → at most ``MAX_OBJECTS + 1`` items."""

MAX_OBJECTS = 500
"""The most objects (or namespaces) one selector of one related resource may select for one primary."""
NAMESPACES = "/api/v1/namespaces"


class ResolveError(ValueError):
    """Related objects cannot be found as configured (retrying gives the same answer)."""


@dataclass(frozen=True)
class Primaries:
    """The primary object on both sides of one related resource, and what templates may read."""

    origin: Mapping[str, Any]
    destination: Mapping[str, Any]
    origin_side: str
    """The origin side's endpoint name (``.Side`` of a template rendered there: "kcp", "service")."""
    destination_side: str
    local: Mapping[str, Any]
    """The primary on the rule's target side (``.LocalObject``)."""
    remote: Mapping[str, Any]
    """The primary on the rule's source side (``.RemoteObject``)."""
    cluster: str
    cluster_path: str


@dataclass(frozen=True)
class Found:
    """One related object on the origin side and where its copy goes."""

    origin_namespace: str
    origin_name: str
    namespace: str
    name: str

    @property
    def origin_key(self) -> str:
        """``namespace/name`` (``name`` when cluster-scoped): api-syncagent's sort key."""
        return f"{self.origin_namespace}/{self.origin_name}" if self.origin_namespace else self.origin_name


@dataclass(frozen=True)
class Resolution:
    """The related objects found (sorted by origin key), and the origin namespaces a selector lists."""

    found: tuple[Found, ...]
    selected_namespaces: tuple[str, ...] = ()


@functools.lru_cache(maxsize=256)
def _template(text: str) -> Template:
    return compile_template(text, limit=RENDER_LIMIT)


def _render(text: str, data: Struct) -> str:
    try:
        return _template(text).render(data).strip()
    except TemplateError as err:
        raise ResolveError(f"template {text!r}: {err}") from None


def replace(value: str, rewrite: RegexRewrite) -> str:
    """``value`` with every match of the pattern replaced (Go's ``ReplaceAllString``)."""
    if not rewrite.pattern:
        return rewrite.replacement
    try:
        return compile_regexp(rewrite.pattern).replace_all(value, rewrite.replacement)
    except RegexpError as err:
        raise ResolveError(f"invalid pattern {rewrite.pattern!r}: {err}") from None


def reference(obj: Mapping[str, Any], path: str, regex: RegexRewrite | None = None) -> list[str]:
    """The values at ``path`` as strings (each element of a list), trimmed and rewritten; [] if missing."""
    try:
        found, value = paths.get(obj, paths.parse(path))
    except MutationError as err:
        raise ResolveError(f"reference {path!r}: {err}") from None
    if not found:
        return []
    values = [gjson.string(True, v).strip() for v in (value if isinstance(value, list) else [value])]
    return [replace(v, regex) for v in values] if regex is not None else values


def _pairs(origin: list[str], destination: list[str], what: str) -> dict[str, str]:
    if len(origin) != len(destination):
        raise ResolveError(
            f"found {len(origin)} {what} on the origin side, but {len(destination)} on the destination side"
        )
    return {a: b for a, b in zip(origin, destination, strict=True) if a and b}


def _both_sides(locator: Locator, p: Primaries, what: str) -> dict[str, str]:
    """A reference or template evaluated on both primaries: origin value → destination value."""
    if locator.reference is not None:
        origin = reference(p.origin, locator.reference, locator.regex)
        if not origin:
            return {}
        return _pairs(origin, reference(p.destination, locator.reference, locator.regex), what)
    assert locator.template is not None
    template = locator.template
    values = [
        _render(template, Struct(Side=side, Object=obj, ClusterName=p.cluster, ClusterPath=p.cluster_path))
        for side, obj in ((p.origin_side, p.origin), (p.destination_side, p.destination))
    ]
    return {values[0]: values[1]} if all(values) else {}


def _primaries(p: Primaries, **fields: Any) -> Struct:
    """Template data with both primaries (``.LocalObject``, ``.RemoteObject``) and the cluster."""
    return Struct(
        **fields,
        LocalObject=p.local,
        RemoteObject=p.remote,
        ClusterName=p.cluster,
        ClusterPath=p.cluster_path,
    )


def label_selector(selector: RelatedSelector, p: Primaries) -> str:
    """The selector with its label templates rendered, in kube syntax."""
    data = _primaries(p)

    def rendered(text: str) -> str:
        return _render(text, data) if "{{" in text else text

    labels = {rendered(k): rendered(v) for k, v in selector.match_labels.items()}
    labels.pop("", None)
    try:
        text = str(LabelSelector.from_dict({"matchLabels": labels}))
    except SelectorError as err:
        raise ResolveError(f"label selector {labels}: {err}") from None
    return ",".join(part for part in (text, selector.match_expressions) if part)


def _rewrite(rewrite: Rewrite, value: str, related: Mapping[str, Any] | None, p: Primaries) -> str:
    if rewrite.regex is not None:
        return replace(value, rewrite.regex)
    assert rewrite.template is not None
    return _render(rewrite.template, _primaries(p, Value=value, RelatedObject=related))


def _selected(lister: Lister, path: str, selector: str, what: str) -> list[Obj]:
    items = lister(path, selector)
    if len(items) > MAX_OBJECTS:
        raise ResolveError(
            f"the label selector {selector!r} selects more than {MAX_OBJECTS} {what}; narrow it"
        )
    return items


def _namespaces(related: Related, p: Primaries, lister: Lister) -> dict[str, str]:
    """Origin namespace → destination namespace of the related objects."""
    if not related.origin_resource.namespaced:
        return {"": ""}
    locator = related.namespace
    if locator is None:
        origin = str((p.origin.get("metadata") or {}).get("namespace") or "")
        destination = str((p.destination.get("metadata") or {}).get("namespace") or "")
        if not origin or not destination:
            side = p.origin_side if not origin else p.destination_side
            raise ResolveError(
                f"the primary object is cluster-scoped on the {side} side: set object.namespace to say where "
                f"its related {related.origin_resource.plural} are"
            )
        return {origin: destination}
    if locator.selector is not None:
        selector = label_selector(locator.selector, p)
        return {
            name: _rewrite(locator.selector.rewrite, name, None, p)
            for ns in _selected(lister, NAMESPACES, selector, "namespaces")
            if (name := str(ns["metadata"]["name"]))
        }
    return _both_sides(locator, p, "namespaces")


def resolve(related: Related, p: Primaries, lister: Lister) -> Resolution:
    """The related objects of one primary (named, whether they exist or not) and their copies' names."""
    found: list[Found] = []
    selected: list[str] = []
    locator = related.object
    for origin_namespace, namespace in _namespaces(related, p, lister).items():
        if locator.selector is not None:
            selected.append(origin_namespace)
            selector = label_selector(locator.selector, p)
            path = related.origin_resource.path(origin_namespace)
            names = {
                name: _rewrite(locator.selector.rewrite, name, item, p)
                for item in _selected(lister, path, selector, related.origin_resource.plural)
                if (name := str(item["metadata"]["name"]))
            }
        else:
            names = _both_sides(locator, p, "names")
        found.extend(Found(origin_namespace, o, namespace, d) for o, d in names.items() if d)
    return Resolution(tuple(sorted(found, key=lambda f: f.origin_key)), tuple(selected))
