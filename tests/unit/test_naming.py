"""spec.naming rules: api-syncagent's defaults and test vectors, legacy variables, validation of results."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncflow.sync.naming import (
    DEFAULT_NAME_TEMPLATE,
    DEFAULT_NAMESPACE_TEMPLATE,
    NamingRule,
    sha1_hex,
)
from syncflow.templating import TemplateError

OBJ: dict[str, Any] = {
    "apiVersion": "example.corp/v1",
    "kind": "Thing",
    "metadata": {"namespace": "objnamespace", "name": "objname", "labels": {"tier": "Gold"}},
    "spec": {"size": "big"},
}


def test_default_rule_matches_api_syncagent_test_vector() -> None:
    assert NamingRule().render(OBJ, "testcluster", "root:org") == (
        "testcluster",
        "2928c2aa0e510f017f07-73d08a1ba188f1340dae",
    )


@pytest.mark.parametrize(("namespace", "name"), [(None, None), ("", ""), (DEFAULT_NAMESPACE_TEMPLATE, None)])
def test_empty_values_take_the_defaults(namespace: str | None, name: str | None) -> None:
    assert NamingRule(namespace, name).render(OBJ, "testcluster", "root") == NamingRule(
        DEFAULT_NAMESPACE_TEMPLATE, DEFAULT_NAME_TEMPLATE
    ).render(OBJ, "testcluster", "root")


def test_sha1_hex_matches_the_api_syncagent_label_vector() -> None:
    assert sha1_hex("my-test-thing") == "c346c8ceb5d104cc783d09b95e8ea7032c190948"
    assert len(sha1_hex("")) == 40


@pytest.mark.parametrize(
    ("namespace", "name", "path", "want"),
    [
        (
            "synced-{{ .Object.metadata.namespace }}",
            "{{ .Object.metadata.name }}",
            "root",
            ("synced-objnamespace", "objname"),
        ),
        ("{{ .ClusterPath }}", "{{ .ClusterPath | printf `%s-x` }}", "root", ("root", "root-x")),
        ("{{ .ClusterName }}", "{{ .ClusterPath }}.x", "team", ("testcluster", "team.x")),
        ("ns-{{ .Object.metadata.labels.region | default `eu` }}", "n", "root", ("ns-eu", "n")),
        (
            "{{ .Object.metadata.labels.tier | lower }}",
            "{{ join `-` (list .Object.spec.size `obj`) }}",
            "root",
            ("gold", "big-obj"),
        ),
        (
            "{{ if eq .Object.spec.size `big` }}large{{ else }}small{{ end }}",
            "{{ sha3short .Object.metadata.name 8 }}",
            "root",
            ("large", "73d08a1b"),
        ),
        ("  {{ .ClusterName }}\n", "\t{{ .Object.metadata.name }} ", "root", ("testcluster", "objname")),
        (
            "{{ .ClusterName | upper | lower }}",
            "{{ shortHash .Object.metadata.name }}",
            "root",
            ("testcluster", sha1_hex("objname")[:20]),
        ),
    ],
)
def test_template_rules(namespace: str, name: str, path: str, want: tuple[str, str]) -> None:
    assert NamingRule(namespace, name).render(OBJ, "testcluster", path) == want


def test_piping_into_sha3short_with_a_length_fails_as_in_go() -> None:
    rule = NamingRule(name="{{ .Object.metadata.name | sha3short 8 }}")
    with pytest.raises(TemplateError, match="sha3short: wrong type for argument 1: expected string, got int"):
        rule.render(OBJ, "testcluster", "root")


def test_dotted_cluster_path_needs_a_valid_name() -> None:
    with pytest.raises(TemplateError, match='produced "root:org", not a valid object name'):
        NamingRule(name="{{ .ClusterPath }}").render(OBJ, "c", "root:org")


@pytest.mark.parametrize(
    ("pattern", "want"),
    [
        ("$remoteClusterName", "testcluster"),
        ("$remoteNamespace", "objnamespace"),
        ("$remoteNamespaceHash", sha1_hex("objnamespace")[:20]),
        ("$remoteName", "objname"),
        ("$remoteNameHash", sha1_hex("objname")[:20]),
        ("$remoteNamespace-$remoteName", "objnamespace-objname"),
        (
            "x-$remoteNameHash-$remoteNamespaceHash",
            f"x-{sha1_hex('objname')[:20]}-{sha1_hex('objnamespace')[:20]}",
        ),
        ("$remoteClusterName.$remoteName", "testcluster.objname"),
        ("static-name", "static-name"),
    ],
)
def test_legacy_variables(pattern: str, want: str) -> None:
    assert NamingRule(name=pattern).render(OBJ, "testcluster", "root")[1] == want
    assert NamingRule(namespace="$remoteClusterName").render(OBJ, "testcluster", "root")[0] == "testcluster"


def test_legacy_namespace_of_a_cluster_scoped_object_is_empty() -> None:
    cluster_scoped = {"metadata": {"name": "objname"}}
    assert NamingRule(name="$remoteNamespaceHash-$remoteName").render(cluster_scoped, "c", "p") == (
        "c",
        f"{sha1_hex('')[:20]}-objname",
    )


def test_cluster_scoped_local_types_drop_the_namespace() -> None:
    rule = NamingRule(namespace="{{ .Object.nope | lower }}")  # never rendered for cluster-scoped types
    assert rule.render(OBJ, "testcluster", "root", local_namespaced=False) == (
        "",
        "2928c2aa0e510f017f07-73d08a1ba188f1340dae",
    )


@pytest.mark.parametrize(
    ("namespace", "name", "says"),
    [
        (
            None,
            "{{ .Object.metadata.name",
            'spec.naming.name "{{ .Object.metadata.name": line 1, column 1: unclosed',
        ),
        (
            "{{ nope .ClusterName }}",
            None,
            "spec.naming.namespace \"{{ nope .ClusterName }}\": line 1, column 4: function 'nope'",
        ),
        (None, "{{ .x | `a` }}", "non executable command in pipeline stage 2"),
        (None, "{{ if .x }}a", "unclosed {{if}}"),
    ],
)
def test_bad_templates_fail_at_construction(namespace: str | None, name: str | None, says: str) -> None:
    with pytest.raises(TemplateError) as caught:
        NamingRule(namespace, name)
    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("namespace", "name", "says"),
    [
        (
            None,
            "{{ .Object.metadata.name }}-{{ .Object.spec.size | printf `%0300s` }}",
            "must be no more than 253 characters",
        ),
        (
            "{{ .Object.metadata.name }}-{{ sha3short .ClusterName 60 }}",
            None,
            "must be no more than 63 characters",
        ),
        (
            None,
            "{{ .Object.metadata.labels.tier }}",
            'produced "Gold", not a valid object name (DNS-1123 subdomain)',
        ),
        (
            "a.b",
            None,
            'spec.naming.namespace "a.b" produced "a.b", not a valid namespace (DNS-1123 label): '
            "must not contain dots",
        ),
        (None, "{{ .Object.metadata.missing }}", 'produced "<no value>"'),
        (None, "{{ if false }}x{{ end }}", 'produced "", not a valid object name'),
        (None, "{{ .Object.ClusterNmae }}", 'produced "<no value>"'),
        (
            None,
            "{{ .ClusterNmae }}",
            "can't evaluate field ClusterNmae: the data has only ClusterName, ClusterPath",
        ),
    ],
)
def test_invalid_results_name_the_rule_value_and_reason(
    namespace: str | None, name: str | None, says: str
) -> None:
    rule = NamingRule(namespace, name)
    with pytest.raises(TemplateError) as caught:
        rule.render(OBJ, "testcluster", "root")
    assert says in str(caught.value)


def test_default_name_of_a_cluster_scoped_kcp_object_fails_as_in_go() -> None:
    with pytest.raises(TemplateError, match=r"error calling sha3short: .*expected string, got nil"):
        NamingRule().render({"metadata": {"name": "objname"}}, "testcluster", "root", local_namespaced=False)


@given(
    st.from_regex(r"[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?", fullmatch=True),
    st.from_regex(r"[a-z0-9]{1,20}", fullmatch=True),
)
def test_default_rule_always_gives_valid_hashed_names(name: str, namespace: str) -> None:
    obj = {"metadata": {"name": name, "namespace": namespace}}
    local_ns, local_name = NamingRule().render(obj, "cluster1", "root")
    assert local_ns == "cluster1"
    assert len(local_name) == 41
    assert local_name.split("-") == [
        NamingRule(name="{{ sha3short .Object.metadata.namespace }}").render(obj, "c", "p")[1],
        NamingRule(name="{{ sha3short .Object.metadata.name }}").render(obj, "c", "p")[1],
    ]


@pytest.mark.parametrize(
    ("naming", "says"),
    [
        (
            {"name": "{{ .Object.metadata.name | sha512sum }}{{ sha512sum .ClusterName }}"},
            "at least 256 characters",
        ),
        (
            {"namespace": "{{ sha3sum .ClusterName }}-{{ .ClusterName | sha3short 8 }}"},
            "at least 73 characters",
        ),
        ({"namespace": "x" * 64}, "at least 64 characters, more than the 63 of a valid namespace"),
    ],
)
def test_a_naming_template_that_can_never_fit_is_rejected_when_compiled(
    naming: dict[str, str], says: str
) -> None:
    with pytest.raises(TemplateError, match=says):
        NamingRule(**naming)


def test_a_naming_template_that_grows_past_the_cap_stops_rendering() -> None:
    rule = NamingRule(name='{{ range until 100 }}{{ printf "%020d" . }}{{ end }}')
    with pytest.raises(TemplateError, match="output is longer than the limit of 1024 bytes"):
        rule.render({"metadata": {"name": "a", "namespace": "b"}}, "c", "root")
