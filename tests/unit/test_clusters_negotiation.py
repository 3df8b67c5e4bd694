"""Clusters mode's API negotiation: the common spec, each cluster's verdict, when kcp's schema changes."""

from __future__ import annotations

from typing import Any

from syncflow.kube.schema_compat import judge
from syncflow.modes.clusters.identity import SyncedType
from syncflow.modes.clusters.negotiation import change, lowest_common_spec, withdraw

Obj = dict[str, Any]
STRING: Obj = {"type": "string"}
INT: Obj = {"type": "integer"}


def obj(**props: Obj) -> Obj:
    return {"type": "object", "properties": props}


def test_kcps_schema_widens_only_with_every_cluster_and_narrows_only_when_nothing_is_stored() -> None:
    small, big = obj(spec=obj(size=INT)), obj(spec=obj(size=INT, color=STRING))
    assert change(small, big, everyone=True, empty=lambda: False) == "widen"
    assert (
        change(small, big, everyone=False, empty=lambda: True) is None
    )  # a cluster that is away may lack it
    assert change(big, small, everyone=True, empty=lambda: True) == "narrow"
    assert (
        change(big, small, everyone=True, empty=lambda: False) is None
    )  # narrowing would prune stored fields
    assert change(big, big, everyone=True, empty=lambda: True) is None


def test_the_lowest_common_spec_and_the_verdicts() -> None:
    def spec(schema: Obj, scope: str = "Namespaced", status: bool = True) -> Obj:
        version: Obj = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
        if status:
            version["subresources"] = {"status": {}}
        names = {"plural": "widgets", "kind": "Widget"}
        return {"group": "example.com", "names": names, "scope": scope, "versions": [version]}

    east, west = spec(obj(spec=obj(size=INT, color=STRING))), spec(obj(spec=obj(size=INT)), status=False)
    common = lowest_common_spec([east, west])
    assert common["versions"] == [
        {
            "name": "v1",
            "served": True,
            "storage": True,
            "schema": {"openAPIV3Schema": obj(spec=obj(size=INT))},
        }
    ]
    widgets = SyncedType("widgets", "example.com").group_resource
    assert judge(common, east, widgets).state == "Accepted"
    verdict = judge(east, west, widgets)
    assert (verdict.state, verdict.version) == ("Incompatible", "v1")
    assert verdict.message == "the cluster's widgets.example.com v1 takes less than kcp's: spec.color"
    assert judge(common, spec(obj(), scope="Cluster"), widgets).message.startswith(
        "widgets.example.com is Cluster"
    )
    assert judge(common, None, widgets).message == "the cluster does not serve widgets.example.com"


class Workspace:
    """The puller's APIExport, one exported schema and the type's objects, as kcp answers them."""

    def __init__(self, objects: int) -> None:
        schema = {"group": "demo.io", "names": {"plural": "gadgets"}, "scope": "Namespaced"}
        schema["versions"] = [{"name": "v1", "served": True, "storage": True, "schema": obj()}]
        self.export = {
            "metadata": {"name": "syncflow-clusters", "resourceVersion": "7"},
            "spec": {"latestResourceSchemas": ["vabc.gadgets.demo.io", "vdef.other.demo.io"]},
        }
        self.schema = {"metadata": {"name": "vabc.gadgets.demo.io"}, "spec": schema}
        self.objects = [{"metadata": {"name": f"g{i}"}} for i in range(objects)]
        self.patches: list[Obj] = []

    def get(self, path: str, **query: str) -> Obj:
        return {
            "/apis/apis.kcp.io/v1alpha1/apiexports/syncflow-clusters": self.export,
            "/apis/apis.kcp.io/v1alpha1/apiresourceschemas/vabc.gadgets.demo.io": self.schema,
            "/apis/demo.io/v1/gadgets": {"items": self.objects[: int(query.get("limit", "100"))]},
        }[path]

    def merge_patch(self, path: str, patch: Obj) -> Obj:
        self.patches.append(patch)
        return self.export


def test_a_pulled_type_is_withdrawn_when_no_cluster_is_left_unless_kcp_holds_objects_of_it() -> None:
    gadgets = SyncedType("gadgets", "demo.io")
    empty = Workspace(objects=0)
    assert withdraw(empty, gadgets)  # type: ignore[arg-type]
    assert empty.patches == [
        {"metadata": {"resourceVersion": "7"}, "spec": {"latestResourceSchemas": ["vdef.other.demo.io"]}}
    ]
    stored = Workspace(objects=2)
    assert not withdraw(stored, gadgets)  # type: ignore[arg-type]
    assert stored.patches == []  # withdrawing would hide what kcp stores


def test_the_pulled_type_keeps_the_printer_columns_every_cluster_declares() -> None:
    size = {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}
    color = {"name": "Color", "type": "string", "jsonPath": ".spec.color"}

    def spec(*columns: Obj) -> Obj:
        schema = {"openAPIV3Schema": obj(spec=obj(size=INT, color=STRING))}
        version = {"name": "v1", "served": True, "storage": True, "schema": schema}
        version["additionalPrinterColumns"] = list(columns)
        return {
            "group": "example.com",
            "names": {"plural": "widgets"},
            "scope": "Namespaced",
            "versions": [version],
        }

    common = lowest_common_spec([spec(size, color), spec(size)])
    assert common["versions"][0]["additionalPrinterColumns"] == [size]
    assert "additionalPrinterColumns" not in lowest_common_spec([spec(color), spec(size)])["versions"][0]
