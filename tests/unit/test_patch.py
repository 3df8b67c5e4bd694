"""Merge patch, JSON patch and strategic merge patch as kube-apiserver applies them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncflow.devcluster.patch import (
    PatchError,
    PatchSchema,
    builtin_patch_schema,
    json_patch,
    merge_patch,
    strategic_merge_patch,
)

# --- RFC 7386 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [  # the examples of RFC 7386 appendix A
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch_rfc_examples(target: Any, patch: Any, expected: Any) -> None:
    assert merge_patch(target, patch) == expected


def test_merge_patch_does_not_mutate() -> None:
    target = {"a": {"b": 1}, "l": [1]}
    patch = {"a": {"c": [1]}, "l": None}
    before_t, before_p = copy.deepcopy(target), copy.deepcopy(patch)
    result = merge_patch(target, patch)
    result["a"]["c"].append(2)
    assert (target, patch) == (before_t, before_p)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=15,
)


@given(st.dictionaries(st.text(max_size=4), _json, max_size=5))
def test_merge_patch_with_empty_patch_is_identity(obj: dict[str, Any]) -> None:
    assert merge_patch(obj, {}) == obj


@given(
    st.dictionaries(st.text(max_size=4), _json, max_size=4),
    st.dictionaries(st.text(max_size=4), _json, max_size=4),
)
def test_merge_patch_is_idempotent(target: dict[str, Any], patch: dict[str, Any]) -> None:
    once = merge_patch(target, patch)
    assert merge_patch(once, patch) == once


# --- RFC 6902 ---------------------------------------------------------------------------------


def test_json_patch_applies_operations_in_order() -> None:
    doc = {"metadata": {"labels": {"a": "1"}}, "spec": {"items": [1, 2]}}
    ops = [
        {"op": "test", "path": "/metadata/labels/a", "value": "1"},
        {"op": "add", "path": "/metadata/labels/b", "value": "2"},
        {"op": "replace", "path": "/spec/items/0", "value": 9},
        {"op": "add", "path": "/spec/items/-", "value": 3},
        {"op": "remove", "path": "/metadata/labels/a"},
        {"op": "copy", "from": "/metadata/labels", "path": "/copied"},
        {"op": "move", "from": "/copied", "path": "/moved"},
    ]
    assert json_patch(doc, ops) == {
        "metadata": {"labels": {"b": "2"}},
        "spec": {"items": [9, 2, 3]},
        "moved": {"b": "2"},
    }
    assert doc == {"metadata": {"labels": {"a": "1"}}, "spec": {"items": [1, 2]}}


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([{"op": "test", "path": "/a", "value": 2}], "the test operation failed"),
        ([{"op": "remove", "path": "/missing"}], "the patch cannot be applied"),
        ([{"op": "replace", "path": "/missing/x", "value": 1}], "the patch cannot be applied"),
        ([{"op": "frobnicate", "path": "/a"}], "invalid json patch"),
        ([{"path": "/a"}], "invalid json patch"),
        ([{"op": "add", "path": "a", "value": 1}], "invalid json patch"),
        ({"op": "add"}, "json patch must be a list of operations"),
        (["add"], "invalid json patch: operation"),
    ],
)
def test_json_patch_errors(ops: Any, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        json_patch({"a": 1}, ops)


# --- strategic merge patch --------------------------------------------------------------------

DEPLOYMENT = builtin_patch_schema("apps", "Deployment")
assert DEPLOYMENT is not None


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a.io/x"]},
        "spec": {
            "replicas": 1,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "app:1",
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                            "ports": [{"containerPort": 80, "name": "http"}],
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        },
                        {"name": "sidecar", "image": "side:1", "env": [{"name": "S", "value": "s"}]},
                    ],
                    "volumes": [{"name": "data", "emptyDir": {}}],
                    "tolerations": [{"key": "a", "operator": "Exists"}],
                },
            },
        },
        "status": {"conditions": [{"type": "Available", "status": "True"}]},
    }


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return result


def smp(patch: dict[str, Any], original: dict[str, Any] | None = None) -> dict[str, Any]:
    assert DEPLOYMENT is not None
    return strategic_merge_patch(original or deployment(), patch, DEPLOYMENT)


def pod_spec_patch(spec: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": spec}}}


def test_containers_merge_by_name() -> None:
    result = smp(pod_spec_patch({"containers": [{"name": "sidecar", "image": "side:2"}]}))
    assert [(c["name"], c["image"]) for c in containers(result)] == [("app", "app:1"), ("sidecar", "side:2")]
    assert containers(result)[1]["env"] == [{"name": "S", "value": "s"}]


def test_new_container_is_appended() -> None:
    result = smp(pod_spec_patch({"containers": [{"name": "new", "image": "n:1"}]}))
    assert [c["name"] for c in containers(result)] == ["app", "sidecar", "new"]


def test_env_ports_and_mounts_merge_by_their_keys() -> None:
    patch = pod_spec_patch(
        {
            "containers": [
                {
                    "name": "app",
                    "env": [{"name": "B", "value": "two"}, {"name": "C", "value": "3"}],
                    "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}],
                    "volumeMounts": [{"mountPath": "/data", "readOnly": True}],
                }
            ]
        }
    )
    app = containers(smp(patch))[0]
    assert app["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "two"},
        {"name": "C", "value": "3"},
    ]
    assert app["ports"] == [{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 443}]
    assert app["volumeMounts"] == [{"name": "data", "mountPath": "/data", "readOnly": True}]


def test_kubectl_apply_shape_with_set_element_order() -> None:
    # What `kubectl apply` sends after the file changed the app image and dropped sidecar's env S.
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
                    "containers": [
                        {"name": "app", "image": "app:2"},
                        {
                            "name": "sidecar",
                            "$setElementOrder/env": [],
                            "env": [{"name": "S", "$patch": "delete"}],
                        },
                    ],
                }
            }
        }
    }
    result = smp(patch)
    app, sidecar = containers(result)
    assert app["image"] == "app:2"
    assert app["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert sidecar == {"name": "sidecar", "image": "side:1", "env": []}


def test_set_element_order_reorders_and_keeps_server_only_items_in_place() -> None:
    original = deployment()
    containers(original).insert(1, {"name": "injected", "image": "mesh:1"})
    patch = pod_spec_patch({"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]})
    # kube merges the server-only run with the ordered run by live position: injected (live #1)
    # comes before sidecar (live #2).
    assert [c["name"] for c in containers(smp(patch, original))] == ["injected", "sidecar", "app"]
    patch = pod_spec_patch(
        {
            "$setElementOrder/containers": [{"name": "first"}, {"name": "app"}, {"name": "sidecar"}],
            "containers": [{"name": "first", "image": "f:1"}],
        }
    )
    assert [c["name"] for c in containers(smp(patch, original))] == ["first", "app", "injected", "sidecar"]


def test_set_element_order_must_agree_with_patch_list() -> None:
    patch = pod_spec_patch(
        {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
            "containers": [{"name": "sidecar", "image": "s"}, {"name": "app", "image": "a"}],
        }
    )
    with pytest.raises(PatchError, match=r"doesn't match \$setElementOrder list"):
        smp(patch)


def test_lists_without_strategy_are_replaced() -> None:
    result = smp(pod_spec_patch({"tolerations": [{"key": "b", "operator": "Exists"}]}))
    assert result["spec"]["template"]["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}]


def test_volumes_by_name_and_status_conditions_by_type() -> None:
    result = smp(
        {
            "spec": {"template": {"spec": {"volumes": [{"name": "cache", "emptyDir": {}}]}}},
            "status": {"conditions": [{"type": "Available", "status": "False"}, {"type": "Progressing"}]},
        }
    )
    assert [v["name"] for v in result["spec"]["template"]["spec"]["volumes"]] == ["data", "cache"]
    assert result["status"]["conditions"] == [
        {"type": "Available", "status": "False"},
        {"type": "Progressing"},
    ]


def test_metadata_finalizers_merge_as_set_and_delete_from_primitive_list() -> None:
    result = smp({"metadata": {"finalizers": ["b.io/y", "a.io/x"]}})
    assert result["metadata"]["finalizers"] == ["a.io/x", "b.io/y"]
    result = smp({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.io/x"], "finalizers": ["c.io/z"]}})
    assert result["metadata"]["finalizers"] == ["c.io/z"]


def test_owner_references_merge_by_uid() -> None:
    original = {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}]}}
    cm = builtin_patch_schema("", "ConfigMap")
    assert cm is not None
    result = strategic_merge_patch(
        original, {"metadata": {"ownerReferences": [{"uid": "2", "name": "c"}]}}, cm
    )
    assert result["metadata"]["ownerReferences"] == [{"uid": "1", "name": "a"}, {"uid": "2", "name": "c"}]


def test_null_deletes_and_maps_merge() -> None:
    result = smp({"metadata": {"labels": {"app": None, "tier": "web"}}, "spec": {"replicas": None}})
    assert result["metadata"]["labels"] == {"tier": "web"}
    assert "replicas" not in result["spec"]


def test_patch_replace_and_delete_on_maps() -> None:
    result = smp({"metadata": {"labels": {"$patch": "replace", "only": "this"}}})
    assert result["metadata"]["labels"] == {"only": "this"}
    result = smp({"metadata": {"labels": {"$patch": "delete"}}})
    assert result["metadata"]["labels"] == {}
    result = smp({"metadata": {"labels": {"$patch": "merge", "x": "y"}}})
    assert result["metadata"]["labels"] == {"app": "web", "x": "y"}


def test_patch_replace_inside_list() -> None:
    patch = pod_spec_patch({"containers": [{"$patch": "replace"}, {"name": "solo", "image": "s:1"}]})
    assert containers(smp(patch)) == [{"name": "solo", "image": "s:1"}]


def test_retain_keys_clears_other_keys() -> None:
    original = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    assert smp(patch, original) == {"spec": {"strategy": {"type": "Recreate"}}}
    bad = {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}
    with pytest.raises(PatchError, match=r"rollingUpdate is not present in the \$retainKeys list"):
        smp(bad, original)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"metadata": {"$frobnicate": 1}}, r"unknown patch directive: \$frobnicate"),
        ({"metadata": {"labels": {"$patch": "nuke"}}}, 'unknown patch type: "nuke" in map'),
        (pod_spec_patch({"containers": [{"image": "x"}]}), "does not contain declared merge key: name"),
        (pod_spec_patch({"containers": ["x"]}), "must hold objects"),
        ({"metadata": {"finalizers": [{"a": 1}]}}, "must hold primitives"),
    ],
)
def test_strategic_merge_errors(patch: dict[str, Any], message: str) -> None:
    with pytest.raises(PatchError, match=message):
        smp(patch)


def test_new_values_are_cleaned_of_directives_and_nulls() -> None:
    original = {"metadata": {"name": "x"}}
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "E", "x": None}]}]}}}
    }
    result = smp(patch, original)
    assert containers(result) == [{"name": "a", "env": [{"name": "E"}]}]


def test_service_ports_merge_by_port_and_plain_kinds() -> None:
    svc = builtin_patch_schema("", "Service")
    assert svc is not None
    original = {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}}
    result = strategic_merge_patch(original, {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}, svc)
    assert result["spec"]["ports"] == [{"port": 80, "targetPort": 9090}, {"port": 443}]
    role = builtin_patch_schema("rbac.authorization.k8s.io", "Role")
    assert role is not None
    rules = {"rules": [{"verbs": ["get"]}, {"verbs": ["list"]}]}
    assert strategic_merge_patch(rules, {"rules": [{"verbs": ["watch"]}]}, role) == {
        "rules": [{"verbs": ["watch"]}]
    }
    sa = builtin_patch_schema("", "ServiceAccount")
    assert sa is not None
    result = strategic_merge_patch({"secrets": [{"name": "a"}]}, {"secrets": [{"name": "b"}]}, sa)
    assert result == {"secrets": [{"name": "a"}, {"name": "b"}]}


@pytest.mark.parametrize(
    ("group", "kind", "known"),
    [
        ("", "ConfigMap", True),
        ("", "Pod", True),
        ("apps", "StatefulSet", True),
        ("coordination.k8s.io", "Lease", True),
        ("apiextensions.k8s.io", "CustomResourceDefinition", True),
        ("example.com", "Widget", False),
        ("apps", "ConfigMap", False),
    ],
)
def test_builtin_patch_schema_lookup(group: str, kind: str, known: bool) -> None:
    assert (builtin_patch_schema(group, kind) is not None) is known


def test_strategic_merge_does_not_mutate_inputs() -> None:
    original, patch = deployment(), pod_spec_patch({"containers": [{"name": "app", "image": "x"}]})
    before = copy.deepcopy(patch)
    result = smp(patch, original)
    containers(result)[0]["env"].append({"name": "Z"})
    assert original == deployment()
    assert patch == before


_MERGE_KEYS = {"name", "containerPort", "mountPath", "type"}


def _subset(draw: st.DrawFn, value: Any) -> Any:
    if isinstance(value, dict):
        keys = draw(st.lists(st.sampled_from(sorted(value)), unique=True)) if value else []
        keep = set(keys) | (_MERGE_KEYS & set(value))
        return {k: _subset(draw, value[k]) for k in value if k in keep}
    if isinstance(value, list) and value and all(isinstance(v, dict) and _MERGE_KEYS & set(v) for v in value):
        picked = draw(st.lists(st.sampled_from(range(len(value))), unique=True))
        return [_subset(draw, value[i]) for i in sorted(picked)]
    return value


_names = st.lists(st.from_regex(r"[a-z]{1,5}", fullmatch=True), unique=True, max_size=3)


@st.composite
def _object_and_subset(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    obj = deployment()
    fresh = [n for n in draw(_names) if n not in ("app", "sidecar")]
    containers(obj).extend({"name": n, "image": draw(st.text(max_size=3))} for n in fresh)
    # label keys as Kubernetes allows them (a key such as "$x" would be a patch directive)
    keys = st.from_regex(r"[a-z0-9]([a-z0-9._-]{0,2}[a-z0-9])?", fullmatch=True)
    obj["metadata"]["labels"].update(draw(st.dictionaries(keys, st.text(max_size=3), max_size=3)))
    return obj, _subset(draw, obj)


@given(_object_and_subset())
def test_patch_with_a_subset_of_the_object_changes_nothing(
    case: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    obj, patch = case
    assert smp(patch, obj) == obj


@given(st.dictionaries(st.text(max_size=4), _json.filter(lambda v: v is not None), max_size=5))
def test_empty_strategic_patch_is_identity(obj: dict[str, Any]) -> None:
    assert strategic_merge_patch(obj, {}, PatchSchema()) == obj
