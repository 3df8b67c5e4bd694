"""Every period, delay and timeout takes seconds or a Go duration, as kcp's and kube's flags do."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from syncflow.cli import main
from syncflow.config import ConfigError, Settings, load_settings
from syncflow.gocompat.durations import duration_seconds
from syncflow.runtime import agentcli


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90.0), ("2.5", 2.5), ("30s", 30.0), ("1m", 60.0), ("1h30m", 5400.0), ("250ms", 0.25), ("0", 0.0)],
)
def test_seconds_or_go_durations(text: str, seconds: float) -> None:
    assert duration_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "1x", "30 s", "1m-"])
def test_anything_else_is_refused_with_both_forms_named(text: str) -> None:
    with pytest.raises(ValueError, match=r"want seconds \(90\) or a Go duration"):
        duration_seconds(text)


def test_settings_take_durations_from_flags_environment_and_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("SYNCFLOW_HEARTBEAT_PERIOD", "15s")
    config = tmp_path / "settings.yaml"
    config.write_text("lease_ttl: 2m\nnamespace_clean_delay: 0\n")
    settings = load_settings(config, resync_period="1h30m")
    assert (settings.resync_period, settings.heartbeat_period, settings.lease_ttl) == (5400.0, 15.0, 120.0)
    assert settings.namespace_clean_delay == 0.0
    with pytest.raises(ConfigError, match="resync_period"):
        load_settings(resync_period="0s")
    with pytest.raises(ConfigError, match="invalid duration 'soon'"):
        load_settings(task_time_limit="soon")


def test_the_tmc_syncers_documented_flags_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """kcp's docs: ``--resync-period=30s --heartbeat-period=15s`` (and 60s/10s when tuning)."""
    seen: list[Settings] = []
    monkeypatch.setattr(agentcli, "run", lambda settings, *args: seen.append(settings))
    runner = CliRunner()
    for resync, heartbeat in (("30s", "15s"), ("60s", "10s")):
        args = ["workload", "--sync-target-name", "east", f"--resync-period={resync}"]
        result = runner.invoke(main, [*args, f"--heartbeat-period={heartbeat}"])
        assert result.exit_code == 0, result.output
    assert [(s.resync_period, s.heartbeat_period) for s in seen] == [(30.0, 15.0), (60.0, 10.0)]
    refused = runner.invoke(main, ["workload", "--resync-period=soon"])
    assert refused.exit_code == 2 and "invalid duration 'soon'" in refused.output
    short = runner.invoke(main, ["edge", "--upsync-period=500ms"])
    assert short.exit_code == 2 and "too short" in short.output
