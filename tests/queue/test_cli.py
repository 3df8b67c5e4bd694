"""The queue commands parse their arguments and report bad settings by field name."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from redis import Redis

from syncflow.cli import main
from syncflow.config import load_settings
from syncflow.queue.keys import ObjectKey
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Outcome
from tests.queue.conftest import REAL_REDIS_URL, delete_agent_keys, free_port, unique_agent


def test_replay_needs_keys_or_all() -> None:
    result = CliRunner().invoke(main, ["failures", "replay"])
    assert result.exit_code == 2
    assert "give KEYS or --all" in result.output


def test_bad_setting_is_named() -> None:
    result = CliRunner().invoke(main, ["queue", "--agent-name", "Not_A_Label"])
    assert result.exit_code == 1
    assert "agent_name" in result.output


def test_worker_and_beat_options_are_documented() -> None:
    worker = CliRunner().invoke(main, ["worker", "--help"])
    beat = CliRunner().invoke(main, ["beat", "--help"])
    assert worker.exit_code == beat.exit_code == 0
    for option in ("--queues", "--concurrency", "--include", "--redis-url", "--config"):
        assert option in worker.output
    assert "--schedule" in beat.output


def test_worker_sync_policy_options() -> None:
    worker = CliRunner().invoke(main, ["worker", "--help"])
    assert "--resync-period" in worker.output
    bad = CliRunner().invoke(main, ["watch", "--orphan-policy", "shred"])
    assert bad.exit_code == 2 and "'shred' is not one of 'keep', 'delete'" in bad.output


@pytest.mark.parametrize(
    "args",
    [
        ["queue"],
        ["queue", "--json"],
        ["failures", "list"],
        ["failures", "show", "sync/r/c/ns/n"],
        ["failures", "replay", "sync/r/c/ns/n"],
        ["failures", "replay", "--all"],
    ],
    ids=" ".join,
)
def test_unreachable_redis_is_one_clear_line(args: list[str]) -> None:
    url = f"redis://:s3cret@127.0.0.1:{free_port()}/0"
    result = CliRunner().invoke(main, [*args, "--redis-url", url])
    assert result.exit_code == 1
    shown = url.replace(":s3cret@", ":***@")
    assert result.output == f"error: cannot reach Redis at {shown}: Connection refused\n"


def test_unreachable_rabbitmq_broker_is_one_clear_line() -> None:
    url = f"amqp://guest:s3cret@127.0.0.1:{free_port()}//"
    result = CliRunner().invoke(
        main, ["queue", "--agent-name", unique_agent(), "--redis-url", REAL_REDIS_URL, "--broker-url", url]
    )
    assert result.exit_code == 1
    shown = url.replace(":s3cret@", ":***@")
    assert result.output == f"error: cannot reach the broker: RabbitMQ at {shown}: Connection refused\n"


def test_failures_list_shows_at_most_limit_keys_and_says_how_many_there_are() -> None:
    settings = load_settings(agent_name=unique_agent(), redis_url=REAL_REDIS_URL)
    redis = Redis.from_url(REAL_REDIS_URL)
    service = QueueService(redis, settings, lambda messages, together=False: None)
    queue = service.queues["sync"]
    try:
        for i in range(5):
            key = ObjectKey("sync", "r", "c", "ns", f"obj-{i}")
            service.add(key)
            queue.claim(key, f"t{i}")
            queue.done(key, f"t{i}", Outcome.PERMANENT, error='{"error": "boom"}')
        flags = ["--redis-url", REAL_REDIS_URL, "--agent-name", settings.agent_name]
        result = CliRunner().invoke(main, ["failures", "list", "--limit", "2", *flags])
        assert result.exit_code == 0, result.output
        assert [line.split()[0] for line in result.stdout.splitlines()] == [
            "sync/r/c/ns/obj-0",
            "sync/r/c/ns/obj-1",
        ]
        assert result.stderr == "showing 2 of 5 parked keys (--limit)\n"
        listed = CliRunner().invoke(main, ["failures", "list", "--json", *flags])
        assert len(json.loads(listed.stdout)) == 5 and listed.stderr == ""
    finally:
        delete_agent_keys(redis, settings.agent_name)
