"""Every endpoint of the console against a real Redis, keys put in each state by the queue's scripts."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from syncflow.console.models import Leader, Workers
from syncflow.console.reader import Agent, Reader
from syncflow.queue.service import QueueService
from tests.console.conftest import Sent, client_for, put

KEYS = {
    "sync/dbs/root:team-a/default/synced-db": "synced",
    "sync/dbs/root:team-a/default/pending-db": "pending",
    "sync/dbs/root:team-a/default/running-db": "running",
    "sync/dbs/root:team-b/prod/retrying-db": "retrying",
    "sync/dbs/root:team-b/prod/parked-db": "parked",
    "sync/certs/root:team-b/prod/parked-cert": "parked",
    "status/dbs/root:team-a/default/synced-db": "synced",
}


@pytest.fixture
def client(service: QueueService, reader: Reader) -> TestClient:
    for key, state in KEYS.items():
        put(service, key, state, cause="forbidden:root:team-b" if "cert" not in key else "conflict:foreign")
    return client_for(reader)


def csrf(client: TestClient) -> str:
    page = client.get("/").text
    return page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]


def test_healthz(client: TestClient) -> None:
    assert client.get("/healthz").text == "ok\n"


def test_overview_counts_per_rule_workspace_and_queue(client: TestClient) -> None:
    o = client.get("/api/overview").json()
    assert o["totals"] == {"synced": 2, "pending": 1, "running": 1, "retrying": 1, "parked": 2}
    rules = {g["name"]: g for g in o["rules"]}
    assert (rules["dbs"]["synced"], rules["dbs"]["parked"], rules["certs"]["parked"]) == (2, 1, 1)
    workspaces = {g["name"]: g for g in o["workspaces"]}
    assert workspaces["root:team-a"]["pending"] == 1 and workspaces["root:team-b"]["retrying"] == 1
    queues = {q["queue"]: q for q in o["queues"]}
    assert queues["sync"]["depth"] == 1 and queues["sync"]["oldest_pending_seconds"] is not None
    assert queues["status"]["depth"] == 0 and queues["status"]["oldest_pending_seconds"] is None
    assert o["latency"]["p50"] is None and o["latency"]["error"], "no metrics endpoint: unknown, and why"
    assert o["leader"]["holder"] is None and o["workers"]["live"] == []


def test_the_overview_page_has_a_row_per_rule(client: TestClient) -> None:
    page = client.get("/").text
    assert page.count('data-testid="rule-row"') == 2
    assert page.count('data-testid="replay-rule"') == 2, "both rules have parked keys"
    assert 'data-testid="replay-form"' in page and 'data-testid="replay-parked"' in page
    assert '<td class="n parked" data-state="parked">1</td>' in page, "rendered with the page"


def test_the_overview_shows_each_rules_latency(service: QueueService, metrics_urls: list[str]) -> None:
    for key, state in KEYS.items():
        put(service, key, state)
    put(service, "sync/queues/root:team-a/default/orders", "synced")
    agent = Agent(lambda: Leader(lease=""), Workers, metrics_urls)
    client = client_for(Reader(service, agent=agent))
    rules = {rule["name"]: rule for rule in client.get("/api/overview").json()["latency"]["rules"]}
    assert rules["certs"]["samples"] == 20 and rules["certs"]["p50"] == pytest.approx(3.0)
    assert rules["dbs"]["samples"] == 210 and "queues" not in rules
    page = client.get("/").text
    rows = {row.split('"', 1)[0]: row for row in page.split('data-testid="rule-row" data-rule="')[1:]}
    assert '<td class="n" data-testid="rule-p50">3.000 s</td>' in rows["certs"]
    assert '<td class="n" data-testid="rule-p50">\u2013</td>' in rows["queues"], "no samples: unknown"


def test_objects_by_state_and_filters(client: TestClient) -> None:
    listed = client.get("/api/objects").json()
    assert sorted((r["key"], r["state"]) for r in listed["items"]) == sorted(KEYS.items())
    assert listed["continue"] is None
    parked = client.get("/api/objects", params={"state": "parked"}).json()["items"]
    assert {r["name"] for r in parked} == {"parked-db", "parked-cert"}
    assert {r["cause"] for r in parked} == {"forbidden:root:team-b", "conflict:foreign"}
    by_name = client.get("/api/objects", params={"name": "synced"}).json()["items"]
    assert {r["verb"] for r in by_name} == {"sync", "status"}
    narrow = {"rule": "dbs", "workspace": "root:team-b", "namespace": "prod", "state": "retrying"}
    assert [r["name"] for r in client.get("/api/objects", params=narrow).json()["items"]] == ["retrying-db"]
    glob = client.get("/api/objects", params={"workspace": "root:team-*", "name": "*-cert"}).json()["items"]
    assert [r["name"] for r in glob] == ["parked-cert"]


def test_a_key_pending_again_after_it_synced_is_listed_once_as_pending(
    client: TestClient, service: QueueService
) -> None:
    put(service, "sync/dbs/root:team-a/default/synced-db", "pending")
    rows = client.get("/api/objects", params={"name": "synced-db", "rule": "dbs", "verb": "sync"}).json()[
        "items"
    ]
    assert [r["state"] for r in rows] == ["pending"]
    totals = client.get("/api/overview").json()["totals"]
    assert (totals["synced"], totals["pending"]) == (1, 2), "counted once, as pending"


def test_the_objects_page_has_the_filter_form_and_rows(client: TestClient) -> None:
    page = client.get("/objects", params={"name": "parked", "state": "parked"}).text
    assert 'name="name"' in page and 'data-testid="filter"' in page
    assert page.count('data-testid="object-row"') == 2
    assert page.count('data-testid="object-link"') == 2 and page.count('data-testid="object-state"') == 2


def test_bad_filters_and_tokens_are_400(client: TestClient) -> None:
    assert client.get("/api/objects", params={"state": "lost"}).status_code == 400
    assert client.get("/api/objects", params={"name": "a/b"}).status_code == 400
    assert client.get("/api/objects", params={"continue": "nonsense!"}).status_code == 400
    assert client.get("/api/objects", params={"limit": "many"}).status_code == 400
    assert client.get("/objects", params={"state": "lost"}).status_code == 400


def test_a_continue_token_belongs_to_its_filters(client: TestClient) -> None:
    first = client.get("/api/objects", params={"limit": 1}).json()
    assert len(first["items"]) == 1 and first["continue"]
    other = client.get("/api/objects", params={"limit": 1, "state": "parked", "continue": first["continue"]})
    assert other.status_code == 400


def test_one_object_with_its_history_and_last_error(client: TestClient) -> None:
    detail = client.get("/api/objects/sync/dbs/root:team-b/prod/parked-db").json()
    assert detail["row"]["state"] == "parked"
    history = detail["history"]
    assert history["attempts"] == 1 and history["parked_at"] and history["first_failure"]
    error = history["last_error"]
    assert (error["status"], error["reason"], error["cause"]) == (403, "Forbidden", "forbidden:root:team-b")
    assert detail["source"] is None and detail["copy"] is None, "no endpoints configured"
    synced = client.get("/api/objects/sync/dbs/root:team-a/default/synced-db").json()
    assert synced["history"]["last_synced"] and synced["history"]["last_error"] is None
    running = client.get("/api/objects/sync/dbs/root:team-a/default/running-db").json()
    assert running["history"]["lease_owner_task"].startswith("task-")


def test_the_object_page_shows_state_error_and_replay(client: TestClient) -> None:
    page = client.get("/objects/sync/dbs/root:team-b/prod/parked-db").text
    for testid in ("object-state", "last-error", "replay", "confirm-replay", "replay-result"):
        assert f'data-testid="{testid}"' in page
    assert "403" in page and "Forbidden" in page and "forbidden:root:team-b" in page


def test_unknown_keys_are_404(client: TestClient) -> None:
    assert client.get("/api/objects/sync/dbs/root:team-a/default/nothing").status_code == 404
    assert client.get("/api/objects/not-a-key").status_code == 404
    assert client.get("/objects/sync/dbs/root:team-a/default/nothing").status_code == 404


def test_the_flower_link_names_the_failed_task(service: QueueService, client: TestClient) -> None:
    reader = Reader(service, flower_url="http://flower.example:5555/")
    detail = reader.object("sync/dbs/root:team-b/prod/parked-db")
    assert detail is not None and detail.flower_url == "http://flower.example:5555/task/abc-123"


def test_replay_one_key(client: TestClient, service: QueueService, sent: Sent) -> None:
    token = csrf(client)
    key = "sync/dbs/root:team-b/prod/parked-db"
    answer = client.post(f"/api/objects/{key}/replay", headers={"X-CSRF-Token": token})
    assert answer.status_code == 200 and answer.json()["replayed"] == 1
    assert [str(k) for k, _ in sent] == [key]
    assert client.get(f"/api/objects/{key}").json()["row"]["state"] == "pending"
    again = client.post(f"/api/objects/{key}/replay", headers={"X-CSRF-Token": token}).json()
    assert again["replayed"] == 0 and "not parked" in again["message"]
    missing = client.post(
        "/api/objects/sync/dbs/root:team-a/default/x/replay", headers={"X-CSRF-Token": token}
    )
    assert missing.json()["replayed"] == 0
    assert client.get(f"/api/objects/{key}/replay").status_code in (404, 405), "replay is POST only"


def test_replay_the_parked_keys_of_a_rule_or_a_cause(client: TestClient, sent: Sent) -> None:
    token = csrf(client)
    by_cause = client.post("/api/replay", json={"cause": "conflict:foreign"}, headers={"X-CSRF-Token": token})
    assert by_cause.json()["replayed"] == 1 and [k.name for k, _ in sent] == ["parked-cert"]
    form = client.post("/api/replay", data={"rule": "dbs", "csrf_token": token})
    assert form.json()["replayed"] == 1 and [k.name for k, _ in sent][-1] == "parked-db"
    both = client.post("/api/replay", json={"rule": "dbs", "cause": "x"}, headers={"X-CSRF-Token": token})
    assert both.json()["replayed"] == 0
    assert client.post("/api/replay", json={}, headers={"X-CSRF-Token": token}).status_code == 400
