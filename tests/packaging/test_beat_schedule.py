"""Beat keeps its schedule file in the state directory, never in the directory it was started from."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from redis import Redis

from syncflow.cli import main
from tests.queue.conftest import REAL_REDIS_URL, delete_agent_keys, unique_agent
from tests.support.processes import REPO, SyncflowProcesses
from tests.support.waiting import wait_for


@pytest.fixture
def agent() -> Iterator[str]:
    name = unique_agent()
    yield name
    client = Redis.from_url(REAL_REDIS_URL)
    delete_agent_keys(client, name)
    client.close()


@pytest.mark.integration
def test_beat_writes_its_schedule_under_xdg_state_home(tmp_path: Path, agent: str) -> None:
    cwd, state = tmp_path / "cwd", tmp_path / "state"
    cwd.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "XDG_STATE_HOME": str(state),
        "SYNCFLOW_REDIS_URL": REAL_REDIS_URL,
        "SYNCFLOW_AGENT_NAME": agent,
    }
    env.pop("SYNCFLOW_BEAT_SCHEDULE", None)
    processes = SyncflowProcesses(env, tmp_path, cwd=cwd)
    try:
        beat = processes.start("beat", "beat")
        schedule_dir = state / "syncflow"
        wait_for(
            lambda: any(p.name.startswith("beat-schedule") for p in schedule_dir.glob("*")),
            timeout=30,
            what=lambda: f"a beat-schedule file in {schedule_dir}; beat log:\n{processes.logs()}",
        )
        assert beat.poll() is None
        assert list(cwd.iterdir()) == []
    finally:
        processes.stop_all()


def test_unusable_schedule_directory_is_one_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    result = CliRunner().invoke(main, ["beat", "--schedule", str(blocker / "beat-schedule")])
    assert result.exit_code == 1
    assert result.output == f"Error: --schedule: cannot create directory {blocker}: File exists\n"
