"""``syncflow status``: the console's views in the terminal, from the same reader and models."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from syncflow.cli import main
from syncflow.queue.service import QueueService
from tests.console.conftest import put
from tests.support.redis import session_redis_url

PARKED = "sync/dbs/root:team-a/default/billing"


def status(service: QueueService, *args: str) -> str:
    agent = ["--agent-name", service.settings.agent_name, "--redis-url", session_redis_url()]
    result = CliRunner().invoke(main, ["status", *agent, *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_overview_as_tables(service: QueueService) -> None:
    put(service, PARKED, "parked")
    put(service, "sync/dbs/root:team-b/default/orders", "synced")
    out = status(service)
    assert "RULE   SYNCED   PENDING   RUNNING   RETRYING   PARKED" in out
    assert "dbs    1        0         0         0          1" in out
    assert "root:team-a" in out and "QUEUE" in out and "sync latency: unknown" in out


def test_the_rules_table_has_each_rules_latency(service: QueueService, metrics_urls: list[str]) -> None:
    put(service, "sync/certs/root:team-a/default/tls", "synced")
    put(service, "sync/queues/root:team-a/default/orders", "synced")
    out = status(service, *(arg for url in metrics_urls for arg in ("--metrics-url", url)))
    assert "RULE     SYNCED   PENDING   RUNNING   RETRYING   PARKED   P50      P99" in out
    assert "certs    1        0         0         0          0        3.000s   4.960s" in out
    assert "queues   1        0         0         0          0        -        -" in out
    assert "sync latency: p50 0.0" in out


def test_objects_filtered_and_paged(service: QueueService) -> None:
    put(service, PARKED, "parked")
    put(service, "sync/dbs/root:team-b/default/orders", "synced")
    out = status(service, "--state", "parked")
    assert out.splitlines()[0].split() == ["KEY", "STATE", "AGE", "ATTEMPTS", "CAUSE"]
    assert PARKED in out and "orders" not in out
    page = json.loads(status(service, "--objects", "--limit", "1", "-o", "json"))
    assert len(page["items"]) == 1 and page["continue"]
    rest = json.loads(
        status(service, "--objects", "--limit", "1", "--continue", page["continue"], "-o", "json")
    )
    assert {page["items"][0]["key"], rest["items"][0]["key"]} == {
        PARKED,
        "sync/dbs/root:team-b/default/orders",
    }


def test_one_key_with_its_error(service: QueueService) -> None:
    put(service, PARKED, "parked")
    out = status(service, PARKED)
    assert "State:         parked" in out and "Last error:    403 Forbidden: " in out
    detail = yaml.safe_load(status(service, PARKED, "-o", "yaml"))
    assert detail["history"]["last_error"]["status"] == 403 and detail["source"] is None


def test_scope_and_unknown_keys(service: QueueService) -> None:
    put(service, PARKED, "parked")
    assert "no objects" in status(service, "--objects", "--workspaces", "root:team-b")
    result = CliRunner().invoke(
        main,
        ["status", "--agent-name", service.settings.agent_name, "--redis-url", session_redis_url(), "x/y"],
    )
    assert result.exit_code != 0 and "no key x/y" in result.output
