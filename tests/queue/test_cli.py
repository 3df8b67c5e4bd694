"""The queue commands parse their arguments and report bad settings by field name."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from syncflow.cli import main
from tests.queue.conftest import free_port


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
