"""Server-side apply and managedFields: field sets, merging, conflicts, removal, ownership transfer."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from syncflow.devcluster import fieldpaths
from syncflow.devcluster.errors import StatusError
from syncflow.devcluster.managedfields import Tracking, fields_of
from syncflow.devcluster.resources import BUILTIN_TYPES, crd_resource_type
from syncflow.devcluster.serverside import apply
from syncflow.devcluster.shapes import shape_of

DEPLOYMENTS = next(t for t in BUILTIN_TYPES if t.plural == "deployments")
CONFIGMAPS = next(t for t in BUILTIN_TYPES if t.plural == "configmaps")


def _tracking(manager: str, rtype: Any = CONFIGMAPS, subresource: str = "") -> Tracking:
    return Tracking(
        manager, shape_of(rtype, "v1"), rtype.api_version("v1"), rtype.status_subresource, subresource
    )


def _cm(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data}


def _deployment(*containers: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": list(containers)}}},
    }


def _stored(obj: dict[str, Any], managed: list[dict[str, Any]]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["managedFields"] = managed
    return out


def test_fields_v1_round_trip_with_members_that_have_children() -> None:
    paths = {("f:data", "f:a"), ("f:spec", 'k:{"name":"x"}'), ("f:spec", 'k:{"name":"x"}', "f:image")}
    tree = fieldpaths.to_fields_v1(paths)
    assert tree == {"f:data": {"f:a": {}}, "f:spec": {'k:{"name":"x"}': {".": {}, "f:image": {}}}}
    assert fieldpaths.from_fields_v1(tree) == paths
    assert (
        fieldpaths.describe(("f:spec", 'k:{"name":"x","port":80}', "f:image"))
        == '.spec[name="x",port=80].image'
    )


def test_deployment_containers_are_keyed_by_name_and_finalizers_are_a_set() -> None:
    obj = _deployment({"name": "a", "image": "nginx"})
    obj["metadata"]["finalizers"] = ["x.io/f"]
    found = fields_of(obj, shape_of(DEPLOYMENTS, "v1"))
    item = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"a"}')
    assert {
        item,
        (*item, "f:image"),
        (*item, "f:name"),
        ("f:metadata", "f:finalizers", 'v:"x.io/f"'),
    } <= found


def test_apply_creates_and_owns_exactly_its_configuration() -> None:
    created, managed = apply(None, _cm(a="1"), _tracking("mgr"), force=False)
    assert created["data"] == {"a": "1"}
    assert [(m["manager"], m["operation"], m["fieldsV1"]) for m in managed] == [
        ("mgr", "Apply", {"f:data": {"f:a": {}}})
    ]


def test_conflict_with_another_manager_unless_forced() -> None:
    live, managed = apply(None, _cm(a="1"), _tracking("first"), force=False)
    live = _stored(live, managed)
    with pytest.raises(StatusError) as conflict:
        apply(live, _cm(a="2"), _tracking("second"), force=False)
    assert conflict.value.code == 409
    assert conflict.value.message == 'Apply failed with 1 conflict: conflict with "first": .data.a'
    assert conflict.value.details["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "first"', "field": ".data.a"}
    ]
    shared, managed = apply(live, _cm(a="1"), _tracking("second"), force=False)  # same value: co-owned
    assert {m["manager"] for m in managed} == {"first", "second"}
    forced, managed = apply(_stored(shared, managed), _cm(a="2"), _tracking("second"), force=True)
    assert forced["data"] == {"a": "2"}
    assert [m["manager"] for m in managed] == ["second"]


def test_removed_fields_go_unless_someone_else_owns_them() -> None:
    live, managed = apply(None, _cm(a="1", b="2", c="3"), _tracking("one"), force=False)
    live, managed = apply(_stored(live, managed), _cm(c="3"), _tracking("two"), force=False)
    after, managed = apply(_stored(live, managed), _cm(a="1"), _tracking("one"), force=False)
    assert after["data"] == {"a": "1", "c": "3"}  # b was only "one"'s; c is still "two"'s
    owners = {m["manager"]: fieldpaths.from_fields_v1(m["fieldsV1"]) for m in managed}
    assert owners == {"one": {("f:data", "f:a")}, "two": {("f:data", "f:c")}}


def test_update_takes_over_the_fields_it_changes() -> None:
    live, managed = apply(None, _cm(a="1", b="2"), _tracking("applier"), force=False)
    live = _stored(live, managed)
    edited = copy.deepcopy(live)
    edited["data"]["a"] = "edited"
    managed = _tracking("kubectl-edit").updated(live, edited)
    owners = {(m["manager"], m["operation"]): fieldpaths.from_fields_v1(m["fieldsV1"]) for m in managed}
    assert owners == {
        ("applier", "Apply"): {("f:data", "f:b")},
        ("kubectl-edit", "Update"): {("f:data", "f:a")},
    }
    edited["metadata"]["managedFields"] = managed
    with pytest.raises(StatusError) as conflict:
        apply(edited, _cm(a="1", b="2"), _tracking("applier"), force=False)
    assert conflict.value.message.startswith(
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1 at '
    ) and conflict.value.message.endswith(": .data.a")


def test_keyed_list_items_merge_per_manager() -> None:
    track_a, track_b = _tracking("a", DEPLOYMENTS), _tracking("b", DEPLOYMENTS)
    live, managed = apply(None, _deployment({"name": "a", "image": "one"}), track_a, force=False)
    live, managed = apply(_stored(live, managed), _deployment({"name": "b", "image": "two"}), track_b, False)
    names = [c["name"] for c in live["spec"]["template"]["spec"]["containers"]]
    assert names == ["a", "b"]
    live, managed = apply(_stored(live, managed), _deployment(), track_a, force=False)
    assert live["spec"]["template"]["spec"]["containers"] == [{"name": "b", "image": "two"}]


def test_crd_list_map_keys_and_sets() -> None:
    crd = {
        "spec": {
            "group": "x.io",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "ports": {
                                            "type": "array",
                                            "x-kubernetes-list-type": "map",
                                            "x-kubernetes-list-map-keys": ["port", "protocol"],
                                            "items": {"type": "object"},
                                        },
                                        "tags": {"type": "array", "x-kubernetes-list-type": "set"},
                                        "args": {"type": "array"},
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        }
    }
    things = crd_resource_type(crd)

    def thing(**spec: Any) -> dict[str, Any]:
        return {"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}

    one, two = _tracking("one", things), _tracking("two", things)
    live, managed = apply(
        None, thing(ports=[{"port": 80, "protocol": "TCP"}], tags=["a"], args=["x"]), one, False
    )
    live, managed = apply(
        _stored(live, managed), thing(ports=[{"port": 80, "protocol": "UDP"}], tags=["b"]), two, False
    )
    assert live["spec"]["ports"] == [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}]
    assert live["spec"]["tags"] == ["a", "b"] and live["spec"]["args"] == ["x"]
    owned = fieldpaths.from_fields_v1(next(m for m in managed if m["manager"] == "two")["fieldsV1"])
    assert ("f:spec", "f:ports", 'k:{"port":80,"protocol":"UDP"}') in owned


def test_status_is_not_owned_through_the_main_resource() -> None:
    applied = {**_deployment({"name": "a", "image": "x"}), "status": {"replicas": 3}}
    created, managed = apply(None, applied, _tracking("m", DEPLOYMENTS), force=False)
    assert "status" not in created
    assert "f:status" not in managed[0]["fieldsV1"]
    status, managed = apply(
        _stored(created, managed), applied, _tracking("controller", DEPLOYMENTS, "status"), force=False
    )
    assert status["status"] == {"replicas": 3}
    entry = next(m for m in managed if m["manager"] == "controller")
    assert entry["subresource"] == "status" and entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}
