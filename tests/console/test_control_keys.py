"""A mode's control keys (and rule-wide keys) name no object: the overview counts them under one
``(control)`` rule row and no workspace, and a viewer scoped to workspaces does not count them."""

from __future__ import annotations

from syncflow.console.filters import Scope
from syncflow.console.reader import Reader
from syncflow.queue.registry import register_verb
from syncflow.queue.service import QueueService
from tests.console.conftest import client_for, put

register_verb("console-probe", "control")

OBJECT = "sync/dbs/root:team-a/default/db"
CONTROL_SYNCED = "console-probe/dbs/service//dbs"
CONTROL_PARKED = "console-probe/certs/root:team-a//certs"


def test_control_keys_count_under_one_row_and_no_workspace(service: QueueService) -> None:
    for key, state in ((OBJECT, "synced"), (CONTROL_SYNCED, "synced"), (CONTROL_PARKED, "parked")):
        put(service, key, state)
    o = client_for(Reader(service, Scope())).get("/api/overview").json()
    rules = {g["name"]: g for g in o["rules"]}
    assert (rules["(control)"]["synced"], rules["(control)"]["parked"]) == (1, 1)
    assert rules["dbs"]["synced"] == 1, "the object key only"
    assert {g["name"] for g in o["workspaces"]} == {"root:team-a"}
    assert o["workspaces"][0]["synced"] == 1 and o["workspaces"][0]["parked"] == 0


def test_a_scoped_viewer_counts_no_control_keys(service: QueueService) -> None:
    for key, state in ((OBJECT, "parked"), (CONTROL_SYNCED, "synced"), (CONTROL_PARKED, "parked")):
        put(service, key, state)
    o = client_for(Reader(service, Scope.parse("root:team-a"))).get("/api/overview").json()
    assert "(control)" not in {g["name"] for g in o["rules"]}
    assert o["totals"]["parked"] == 1 and o["totals"]["synced"] == 0
