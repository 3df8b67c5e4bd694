"""PublishedResource: api-syncagent manifests parse, each rule fails with its message, dumps round-trip."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from syncflow.api.crdgen import all_crds, to_yaml
from syncflow.api.publishedresource import PublishedResource, PublishedResourceError
from tests.support.publishedresources import EXAMPLE, MINIMAL


def _with(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with ``value`` set at dotted ``path`` (list indexes as numbers)."""
    obj = copy.deepcopy(base)
    parts = path.split(".")
    target: Any = obj
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target.setdefault(part, {})
    if value is _DELETE:
        del target[parts[-1]]
    else:
        target[parts[-1]] = value
    return obj


_DELETE = object()


def _problems(obj: dict[str, Any]) -> list[str]:
    with pytest.raises(PublishedResourceError) as info:
        PublishedResource.parse(obj)
    return info.value.problems


def test_full_example_parses_with_every_field() -> None:
    pr = PublishedResource.parse(EXAMPLE)
    spec = pr.spec
    assert pr.name == "publish-certificates"
    assert pr.metadata.labels == {"agent": "certs"}
    assert spec.resource.api_group == "cert-manager.io"
    assert spec.resource.selected_versions == ["v1"]
    assert spec.projection is not None
    assert spec.projection.versions == {"v1": "v1beta1"}
    assert spec.projection.short_names == ["serts"]
    assert spec.projection.categories == []
    assert spec.projection.scope == "Namespaced"
    assert spec.naming is not None and spec.naming.namespace == "{{ .ClusterName }}"
    assert spec.filter is not None and spec.filter.resource is not None
    assert spec.filter.resource.match_expressions is not None
    assert spec.filter.resource.match_expressions[1].operator == "DoesNotExist"
    assert spec.enable_workspace_paths is True
    assert spec.mutation is not None and spec.mutation.spec is not None
    assert spec.mutation.spec[2].cel is not None and spec.mutation.spec[2].cel.expression == "value * 2"
    related = spec.related or []
    assert [r.identifier for r in related] == ["tls-secret", "credentials", "legacy"]
    assert related[0].object.reference is not None and related[0].object.reference.path == "spec.secretName"
    assert related[1].watch is not None and related[1].watch.by_selector is not None
    assert related[1].object.namespace is not None and related[1].object.namespace.template is not None
    assert related[1].projection is not None and related[1].projection.resource == "localthings"
    assert related[2].kind == "ConfigMap"
    assert pr.status is not None and pr.status.conditions is not None
    assert pr.status.conditions[0].observed_generation == 3
    assert pr.sync_enabled


def test_dump_round_trips_what_was_given() -> None:
    for manifest in (EXAMPLE, MINIMAL):
        assert PublishedResource.parse(manifest).model_dump(by_alias=True, exclude_none=True) == manifest


def test_short_names_none_and_empty_differ() -> None:
    absent = PublishedResource.parse(_with(MINIMAL, "spec.projection", {"kind": "Foo"}))
    cleared = PublishedResource.parse(_with(MINIMAL, "spec.projection", {"shortNames": [], "categories": []}))
    assert absent.spec.projection is not None and absent.spec.projection.short_names is None
    assert cleared.spec.projection is not None and cleared.spec.projection.short_names == []
    assert cleared.model_dump(exclude_none=True)["spec"]["projection"] == {"shortNames": [], "categories": []}


@pytest.mark.parametrize(
    "manifest",
    [
        MINIMAL,
        _with(MINIMAL, "spec.resource", {"apiGroup": "example.com", "kind": "Thing", "version": "v1"}),
        _with(MINIMAL, "spec.synchronization", {"enabled": False}),
        _with(
            MINIMAL,
            "spec.related",
            [{"identifier": "creds", "origin": "kcp", "kind": "Secret", "object": {"template": {}}}],
        ),
    ],
)
def test_api_syncagent_style_manifests_parse(manifest: dict[str, Any]) -> None:
    assert PublishedResource.parse(manifest).spec.resource.kind in ("ConfigMap", "Thing")


def test_sync_enabled_defaults_to_true_when_block_absent() -> None:
    assert PublishedResource.parse(MINIMAL).sync_enabled
    assert not PublishedResource.parse(
        _with(MINIMAL, "spec.synchronization", {"enabled": False})
    ).sync_enabled


_RELATED = EXAMPLE["spec"]["related"][0]


def _related(**changes: Any) -> dict[str, Any]:
    entry = copy.deepcopy(_RELATED)
    for key, value in changes.items():
        if value is _DELETE:
            entry.pop(key, None)
        else:
            entry[key] = value
    return _with(MINIMAL, "spec.related", [entry])


_OBJECT = 'spec.related[0]: Invalid value: "object": '


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        (
            _with(
                MINIMAL, "spec.resource", {"apiGroup": "", "kind": "A", "version": "v1", "versions": ["v1"]}
            ),
            "spec.resource.version: Forbidden: version and versions are mutually exclusive",
        ),
        (
            _with(
                _with(MINIMAL, "spec.resource.versions", ["v1", "v2"]), "spec.projection", {"version": "v9"}
            ),
            "spec.projection.version: Forbidden: may only be set when exactly one version is selected",
        ),
        (
            _with(MINIMAL, "spec.projection", {"versions": {"v1": "v2", "v3": "v2"}}),
            'spec.projection.versions: Duplicate value: "v2": both v1 and v3 map to it',
        ),
        (
            _with(MINIMAL, "spec.projection", {"scope": "Galaxy"}),
            'spec.projection.scope: Unsupported value: "Galaxy": supported values: "Cluster", "Namespaced"',
        ),
        (
            _related(kind="Secret"),
            _OBJECT + "must specify either kind (deprecated) or group, version, resource",
        ),
        (
            _related(group=_DELETE, version=_DELETE, resource=_DELETE),
            _OBJECT + "must specify either kind (deprecated) or group, version, resource",
        ),
        (
            _related(resource=_DELETE),
            _OBJECT + "resource and version must be configured together or not at all",
        ),
        (
            _related(version=_DELETE, resource=_DELETE, kind="Secret"),
            _OBJECT + "configuring a group also requires a version and resource",
        ),
        (_related(group=_DELETE, identityHash="abc"), _OBJECT + "identity hashes can only be used with GVRs"),
        (
            _related(syncStatus=True, watch=_DELETE),
            _OBJECT + "watch must be configured when origin is service and syncStatus is true",
        ),
        (
            _related(origin="elsewhere"),
            'spec.related[0].origin: Unsupported value: "elsewhere": supported values: "service", "kcp"',
        ),
        (
            _related(identifier="TLS_secret"),
            'spec.related[0].identifier: Invalid value: "TLS_secret": '
            "String should match pattern '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'",
        ),
        (
            _related(object={}),
            "spec.related[0].object: Required value: "
            "exactly one of reference, selector, template must be set",
        ),
        (
            _related(object={"reference": {"path": "a"}, "template": {"template": "b"}}),
            "spec.related[0].object: Forbidden: exactly one of reference, selector, template may be set, "
            "found reference, template",
        ),
        (
            _related(object={"template": {}, "namespace": {}}),
            "spec.related[0].object.namespace: Required value: exactly one of reference, selector, template "
            "must be set",
        ),
        (
            _related(object={"selector": {"rewrite": {}}}),
            "spec.related[0].object.selector.rewrite: Required value: "
            "exactly one of regex, template must be set",
        ),
        (
            _related(watch={"byOwner": {}, "bySelector": {}}),
            "spec.related[0].watch: Forbidden: exactly one of byOwner, bySelector may be set, "
            "found byOwner, bySelector",
        ),
        (
            _with(MINIMAL, "spec.related", [_RELATED, _RELATED]),
            'spec.related[1].identifier: Duplicate value: "tls-secret"',
        ),
        (
            _with(MINIMAL, "spec.mutation", {"spec": [{}]}),
            "spec.mutation.spec[0]: Required value: exactly one of delete, regex, template, cel must be set",
        ),
        (
            _with(MINIMAL, "spec.mutation", {"status": [{"delete": {"path": "a"}, "cel": {"path": "a"}}]}),
            "spec.mutation.status[0].cel.expression: Required value",
        ),
        (_with(MINIMAL, "spec.synchronization", {}), "spec.synchronization.enabled: Required value"),
        (_with(MINIMAL, "spec.resource.kind", _DELETE), "spec.resource.kind: Required value"),
        (_with(MINIMAL, "spec", _DELETE), "spec: Required value"),
        (_with(MINIMAL, "spec.resourceTypo", {}), "spec.resourceTypo: Forbidden: unknown field"),
        (
            _with(MINIMAL, "spec.enableWorkspacePaths", "yes"),
            'spec.enableWorkspacePaths: Invalid value: "string": must be of type boolean',
        ),
        (
            _with(
                MINIMAL, "spec.filter", {"namespace": {"matchExpressions": [{"key": "a", "operator": "In"}]}}
            ),
            "spec.filter.namespace.matchExpressions[0].values: Required value: "
            "must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            _with(
                MINIMAL,
                "spec.filter",
                {"resource": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}},
            ),
            "spec.filter.resource.matchExpressions[0].values: Forbidden: "
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        (
            _with(
                MINIMAL, "spec.filter", {"resource": {"matchExpressions": [{"key": "a", "operator": "Like"}]}}
            ),
            'spec.filter.resource.matchExpressions[0].operator: Unsupported value: "Like": '
            'supported values: "In", "NotIn", "Exists", "DoesNotExist"',
        ),
        (
            _with(MINIMAL, "spec.filter", {"namespace": {"matchLabels": {"bad key!": "v"}}}),
            'spec.filter.namespace.matchLabels: Invalid value: "bad key!": name part must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName' or 'my.name' or '123-abc', "
            "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            _with(
                MINIMAL,
                "spec.filter",
                {"resource": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["{{ x }}"]}]}},
            ),
            'spec.filter.resource.matchExpressions[0].values[0]: Invalid value: "{{ x }}": '
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyValue' or 'my_value' or '12345', "
            "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
    ],
)
def test_each_rule_fails_with_its_message(manifest: dict[str, Any], expected: str) -> None:
    assert expected in _problems(manifest)


def test_error_lists_every_problem_kubectl_style() -> None:
    bad = _with(_with(MINIMAL, "spec.projection", {"scope": "Galaxy"}), "spec.extra", 1)
    with pytest.raises(PublishedResourceError) as info:
        PublishedResource.parse(bad)
    assert isinstance(info.value, ValueError)
    assert str(info.value) == (
        'The PublishedResource "publish-configmaps" is invalid:\n'
        '* spec.projection.scope: Unsupported value: "Galaxy": supported values: "Cluster", "Namespaced"\n'
        "* spec.extra: Forbidden: unknown field"
    )


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node, *(n for v in node.values() for n in _walk(v))]
    if isinstance(node, list):
        return [n for v in node for n in _walk(v)]
    return []


def test_crd_schema_is_structural_and_complete() -> None:
    crd = next(c for c in all_crds() if c["spec"]["group"] == "syncagent.kcp.io")
    assert crd["metadata"]["name"] == "publishedresources.syncagent.kcp.io"
    assert crd["spec"]["scope"] == "Cluster"
    assert crd["spec"]["names"] == {
        "kind": "PublishedResource",
        "listKind": "PublishedResourceList",
        "plural": "publishedresources",
        "singular": "publishedresource",
    }
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    schema = version["schema"]["openAPIV3Schema"]
    for node in _walk(schema):
        if "properties" in node or "items" in node or "additionalProperties" in node:
            assert node.get("type") in ("object", "array")
        assert not {"$ref", "anyOf", "title", "$defs", "const"} & node.keys()
        assert node.get("additionalProperties") is not False
    spec = schema["properties"]["spec"]
    assert spec["required"] == ["resource"]
    assert spec["properties"]["projection"]["properties"]["scope"]["enum"] == ["Cluster", "Namespaced"]
    assert spec["properties"]["projection"]["properties"]["versions"]["additionalProperties"] == {
        "type": "string"
    }
    related = spec["properties"]["related"]["items"]
    assert related["required"] == ["identifier", "origin", "object"]
    assert related["properties"]["origin"]["enum"] == ["service", "kcp"]
    assert schema["properties"]["metadata"] == {"type": "object"}


def test_crds_yaml_is_a_multi_document_stream() -> None:
    text = to_yaml(all_crds())
    assert text.startswith("---\n")
    assert list(yaml.safe_load_all(text)) == all_crds()
