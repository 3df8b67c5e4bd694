"""Clusters mode's API negotiation: the common spec, each cluster's verdict, when kcp's schema changes."""

from __future__ import annotations

from typing import Any

from syncflow.kube.schema_compat import judge
from syncflow.modes.clusters.identity import SyncedType
from syncflow.modes.clusters.negotiation import change, lowest_common_spec

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
