"""Finding related objects and naming their copies (api-syncagent's resolveRelatedResourceObjects):
references, templates and label selectors, for objects and for namespaces, on both sides."""

from __future__ import annotations

from typing import Any

import pytest

from syncflow.sync.related.resolve import (
    MAX_OBJECTS,
    Found,
    Primaries,
    ResolveError,
    reference,
    resolve,
)
from syncflow.sync.rule import (
    Locator,
    RegexRewrite,
    Related,
    RelatedSelector,
    Resource,
    Rewrite,
)

SECRETS = Resource(group="", version="v1", plural="secrets", kind="Secret", namespaced=True)
ROLES = Resource(
    group="rbac.authorization.k8s.io",
    version="v1",
    plural="clusterroles",
    kind="ClusterRole",
    namespaced=False,
)

REMOTE: dict[str, Any] = {
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "shop"}},
    "spec": {"secretName": "web-tls", "extra": ["a", "", "b"], "port": 8443},
}
LOCAL: dict[str, Any] = {
    "metadata": {"name": "c1", "namespace": "ws1"},
    "spec": {"secretName": "cert-web-tls", "extra": ["la", "lx", "lb"], "port": 8443},
}


def primaries(origin: str = "service", remote: Any = REMOTE, local: Any = LOCAL) -> Primaries:
    from_kcp = origin == "kcp"
    return Primaries(
        origin=remote if from_kcp else local,
        destination=local if from_kcp else remote,
        origin_side=origin,
        destination_side="service" if from_kcp else "kcp",
        local=local,
        remote=remote,
        cluster="ws1",
        cluster_path="root:org:ws",
    )


def related(obj: Locator, namespace: Locator | None = None, resource: Resource = SECRETS) -> Related:
    return Related(
        identifier="tls",
        origin="target",
        origin_resource=resource,
        destination_resource=resource,
        object=obj,
        namespace=namespace,
    )


class Listing:
    """A fake origin side for label selectors: records the requests, answers from ``items``."""

    def __init__(self, items: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.items = items or {}
        self.requests: list[tuple[str, str]] = []

    def __call__(self, path: str, selector: str) -> list[dict[str, Any]]:
        self.requests.append((path, selector))
        return self.items.get(path, [])


def test_a_reference_pairs_the_values_on_both_sides_in_the_primarys_namespaces() -> None:
    got = resolve(related(Locator(reference="spec.secretName")), primaries(), Listing())
    # origin: the service side (local copy); destination: kcp
    assert got.found == (Found("ws1", "cert-web-tls", "default", "web-tls"),)
    assert got.selected_namespaces == ()


def test_a_reference_to_a_list_pairs_elements_and_skips_empty_ones() -> None:
    got = resolve(related(Locator(reference="spec.extra")), primaries("kcp"), Listing())
    assert [(f.origin_name, f.name) for f in got.found] == [("a", "la"), ("b", "lb")]


def test_a_reference_regex_rewrites_each_value_and_numbers_are_strings() -> None:
    assert reference(REMOTE, "spec.secretName", RegexRewrite(pattern="^(.*)-tls$", replacement="$1")) == [
        "web"
    ]
    assert reference(REMOTE, "spec.port") == ["8443"]
    assert reference(REMOTE, "spec.missing") == []
    assert reference(REMOTE, "spec.secretName", RegexRewrite(replacement="fixed")) == ["fixed"]


def test_a_reference_found_on_one_side_only_is_an_error() -> None:
    local = {**LOCAL, "spec": {"extra": ["x"]}}
    with pytest.raises(ResolveError, match="found 3 names on the origin side, but 1 on the destination side"):
        resolve(related(Locator(reference="spec.extra")), primaries("kcp", local=local), Listing())


def test_a_missing_reference_means_nothing_yet() -> None:
    got = resolve(related(Locator(reference="spec.nothing")), primaries(), Listing())
    assert got.found == ()


def test_a_template_is_rendered_on_each_side_with_side_object_and_cluster() -> None:
    template = "{{ .Side }}-{{ .Object.metadata.name }}-{{ .ClusterName }}-{{ .ClusterPath }}"
    got = resolve(related(Locator(template=template)), primaries(), Listing())
    assert got.found == (Found("ws1", "service-c1-ws1-root:org:ws", "default", "kcp-web-ws1-root:org:ws"),)


def test_an_empty_template_result_means_not_yet() -> None:
    template = '{{ .Object.spec.notThere | default "" }}'
    assert resolve(related(Locator(template=template)), primaries(), Listing()).found == ()


def test_a_selector_renders_its_label_templates_lists_the_origin_and_rewrites_names() -> None:
    items = [
        {"metadata": {"name": "b-creds", "labels": {"owner": "c1"}}, "type": "x"},
        {"metadata": {"name": "a-creds", "labels": {"owner": "c1"}}, "type": "y"},
    ]
    listing = Listing({"/api/v1/namespaces/ws1/secrets": items})
    selector = RelatedSelector(
        match_labels={"owner": "{{ .LocalObject.metadata.name }}", '{{ "" }}': "dropped"},
        match_expressions="tier in (gold)",
        rewrite=Rewrite(template="{{ .Value }}-{{ .RelatedObject.type }}-{{ .RemoteObject.metadata.name }}"),
    )
    got = resolve(related(Locator(selector=selector)), primaries(), listing)
    assert listing.requests == [("/api/v1/namespaces/ws1/secrets", "owner=c1,tier in (gold)")]
    assert [(f.origin_name, f.name) for f in got.found] == [
        ("a-creds", "a-creds-y-web"),
        ("b-creds", "b-creds-x-web"),
    ]
    assert got.selected_namespaces == ("ws1",)


def test_a_selector_may_select_at_most_a_bounded_number_of_objects() -> None:
    items = [{"metadata": {"name": f"s{i}"}} for i in range(MAX_OBJECTS + 1)]
    listing = Listing({"/api/v1/namespaces/ws1/secrets": items})
    selector = RelatedSelector(
        match_labels={"a": "b"}, rewrite=Rewrite(regex=RegexRewrite(pattern="s", replacement="t"))
    )
    with pytest.raises(ResolveError, match=f"selects more than {MAX_OBJECTS} secrets; narrow it"):
        resolve(related(Locator(selector=selector)), primaries(), listing)


def test_a_bad_label_template_result_is_a_clear_error() -> None:
    selector = RelatedSelector(
        match_labels={"owner": "{{ .RemoteObject.spec.secretName }}!"}, rewrite=Rewrite(template="x")
    )
    with pytest.raises(ResolveError, match="label selector"):
        resolve(related(Locator(selector=selector)), primaries(), Listing())


def test_namespaces_by_selector_template_and_reference() -> None:
    namespaces = [{"metadata": {"name": "team-b"}}, {"metadata": {"name": "team-a"}}]
    listing = Listing({"/api/v1/namespaces": namespaces})
    by_selector = Locator(
        selector=RelatedSelector(
            match_labels={"sync": "yes"},
            rewrite=Rewrite(regex=RegexRewrite(pattern="^team-", replacement="t-")),
        )
    )
    got = resolve(related(Locator(template="creds"), namespace=by_selector), primaries(), listing)
    assert [(f.origin_namespace, f.namespace) for f in got.found] == [("team-a", "t-a"), ("team-b", "t-b")]
    by_template = Locator(template="{{ .Side }}-ns")
    got = resolve(related(Locator(template="creds"), namespace=by_template), primaries(), Listing())
    assert got.found == (Found("service-ns", "creds", "kcp-ns", "creds"),)
    by_reference = Locator(reference="metadata.name")
    got = resolve(related(Locator(template="creds"), namespace=by_reference), primaries(), Listing())
    assert got.found == (Found("c1", "creds", "web", "creds"),)


def test_a_cluster_scoped_primary_needs_a_namespace_locator() -> None:
    remote = {"metadata": {"name": "web"}, "spec": {"secretName": "s"}}
    with pytest.raises(ResolveError, match=r"cluster-scoped on the kcp side: set object\.namespace"):
        resolve(related(Locator(reference="spec.secretName")), primaries(remote=remote), Listing())


def test_a_cluster_scoped_related_resource_has_no_namespace() -> None:
    got = resolve(related(Locator(template="viewer"), resource=ROLES), primaries(), Listing())
    assert got.found == (Found("", "viewer", "", "viewer"),)


def test_found_objects_are_sorted_as_api_syncagent_sorts_them() -> None:
    # by "namespace/name" as a string: "a-b/x" comes before "a/y"
    listing = Listing({"/api/v1/namespaces": [{"metadata": {"name": "a"}}, {"metadata": {"name": "a-b"}}]})
    namespace = Locator(
        selector=RelatedSelector(rewrite=Rewrite(regex=RegexRewrite(pattern="", replacement="d")))
    )
    got = resolve(related(Locator(template="{{ .Side }}"), namespace=namespace), primaries(), listing)
    assert [f.origin_key for f in got.found] == ["a-b/service", "a/service"]


def test_unsupported_paths_and_bad_templates_are_errors() -> None:
    with pytest.raises(ResolveError, match=r"reference 'spec\.items\.#'"):
        resolve(related(Locator(reference="spec.items.#")), primaries(), Listing())
    with pytest.raises(ResolveError, match="template"):
        resolve(related(Locator(template="{{ .Object.spec.port | nosuchfunc }}")), primaries(), Listing())
