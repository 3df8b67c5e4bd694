"""A viewer scoped to some workspaces (``--workspaces``) sees nothing of the others: not in counts,
lists, object pages or replays."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from syncflow.console.filters import Scope
from syncflow.console.reader import Reader
from syncflow.queue.service import QueueService
from tests.console.conftest import Sent, client_for, put

MINE = "sync/dbs/root:team-a/default/mine"
THEIRS = "sync/dbs/root:team-b/default/theirs"


@pytest.fixture
def client(service: QueueService) -> TestClient:
    put(service, MINE, "parked")
    put(service, THEIRS, "parked")
    put(service, "sync/dbs/root:team-a:sub/default/nested", "synced")
    return client_for(Reader(service, Scope.parse("root:team-a, root:team-a:*")))


def csrf(client: TestClient) -> str:
    return client.get("/").text.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]


def test_counts_leave_other_workspaces_out(client: TestClient) -> None:
    o = client.get("/api/overview").json()
    assert o["totals"]["parked"] == 1 and o["totals"]["synced"] == 1
    assert {g["name"] for g in o["workspaces"]} == {"root:team-a", "root:team-a:sub"}


def test_lists_leave_other_workspaces_out(client: TestClient) -> None:
    keys = [r["key"] for r in client.get("/api/objects").json()["items"]]
    assert THEIRS not in keys and MINE in keys
    assert client.get("/api/objects", params={"workspace": "root:team-b"}).json()["items"] == []
    assert "theirs" not in client.get("/objects").text


def test_another_workspace_s_object_is_not_found(client: TestClient) -> None:
    assert client.get(f"/api/objects/{THEIRS}").status_code == 404
    assert client.get(f"/objects/{THEIRS}").status_code == 404
    assert client.get(f"/api/objects/{MINE}").status_code == 200


def test_another_workspace_s_keys_are_never_replayed(client: TestClient, sent: Sent) -> None:
    token = {"X-CSRF-Token": csrf(client)}
    assert client.post(f"/api/objects/{THEIRS}/replay", headers=token).status_code == 404
    result = client.post("/api/replay", json={"rule": "dbs"}, headers=token).json()
    assert result["replayed"] == 1 and [str(k) for k, _ in sent] == [MINE]
    assert (
        client.post("/api/replay", json={"cause": "forbidden:root:team-a"}, headers=token).json()["replayed"]
        == 0
    )
