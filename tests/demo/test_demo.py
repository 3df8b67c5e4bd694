"""``syncflow demo`` as a user runs it: the whole scenario with ``--once``, and Ctrl-C while it serves."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from syncflow.runtime import redis as demo_redis
from tests.support.lines import LineReader
from tests.support.scrape import scrape, value

pytestmark = pytest.mark.integration

SYNCFLOW = str(Path(sys.executable).parent / "syncflow")


def _env() -> dict[str, str]:
    """The caller's environment without syncflow settings, so the demo starts its own Redis."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SYNCFLOW_")}


def _recorded_pids(workdir: Path) -> list[int]:
    return [int(line.split()[1]) for line in (workdir / "pids").read_text().splitlines()]


def _group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


class DemoOutput(LineReader):
    """The output of a running demo, read line by line by a thread (so waits have deadlines)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        self.process = process
        super().__init__(process.stdout)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoOutput]:
    """``syncflow demo --workdir tmp_path`` (serving until interrupted); killed with its children if left."""
    process = subprocess.Popen(
        [SYNCFLOW, "demo", "--workdir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
        start_new_session=True,
    )
    yield DemoOutput(process)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    if (tmp_path / "pids").exists():
        for pid in _recorded_pids(tmp_path):
            if _group_alive(pid):
                os.killpg(pid, signal.SIGKILL)


def test_demo_once_runs_every_step(tmp_path: Path) -> None:
    result = subprocess.run(
        [SYNCFLOW, "demo", "--once", "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=110,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for step in ("local copy created", "status returned to kcp", "local copy removed"):
        assert step in result.stdout
    assert not any(_group_alive(pid) for pid in _recorded_pids(tmp_path))


def test_clusters_demo_once_runs_every_step(tmp_path: Path) -> None:
    result = subprocess.run(
        [SYNCFLOW, "demo", "--mode", "clusters", "--once", "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=110,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for step in (
        "Clusters east and west registered: Ready (Connected)",
        "in east, not in west",
        "split: shop--east 3, shop--west 2; root status 5/5 ready",
        "west stopped: Ready=False (Unreachable)",
    ):
        assert step in result.stdout
    assert not any(_group_alive(pid) for pid in _recorded_pids(tmp_path))


def test_a_running_demo_says_how_to_attach_serves_metrics_and_ctrl_c_stops_every_child(
    demo: DemoOutput, tmp_path: Path
) -> None:
    """One running demo for both halves: what it prints and serves while it runs, then how it stops."""
    printed = "".join(demo.until("worker, beat and watcher running", timeout=90))
    attach = dict(re.findall(r"^  (Redis|agent|Flower|console): +(.+)$", printed, re.MULTILINE))
    assert attach["agent"] == "demo" and demo_redis.pings(attach["Redis"]), printed
    flower = attach["Flower"]
    assert f"SYNCFLOW_REDIS_URL={attach['Redis']} SYNCFLOW_AGENT_NAME=demo " in flower
    assert " -A syncflow.tasks flower " in flower and "--tasks_columns=name,uuid,state,args," in flower
    console = attach["console"]
    assert f"SYNCFLOW_REDIS_URL={attach['Redis']} SYNCFLOW_AGENT_NAME=demo " in console
    assert " console --port 8080 --metrics-url http://127.0.0.1:" in console, console
    served = r"^  metrics: +http://127\.0\.0\.1:(\d+)/metrics \((\w+)\)$"
    metrics = dict(re.findall(served, printed, re.MULTILINE))
    assert sorted(metrics.values()) == ["beat", "watch", "worker"], printed
    for port, role in metrics.items():
        samples = scrape(int(port))
        assert value(samples, "syncflow_redis_up", agent="demo") == 1.0, role

    pids = _recorded_pids(tmp_path)
    assert len(pids) == 6  # redis, two devclusters, worker, beat, watch
    assert all(_group_alive(pid) for pid in pids)
    demo.process.send_signal(signal.SIGINT)
    assert demo.process.wait(timeout=30) == 0
    demo.until("stopped; logs are in", timeout=5)
    assert [pid for pid in pids if _group_alive(pid)] == []


@pytest.mark.parametrize(
    ("mode", "steps"),
    [
        (
            "workload",
            (
                "SyncTarget demo Ready",
                "running in the physical cluster",
                "ready replicas back on the kcp Deployment: 1/1",
                "on the kcp Service",
                "ConfigMap default/settings and Secret default/credentials",
                "heartbeats on the SyncTarget",
            ),
        ),
        (
            "edge",
            (
                "selected objects are in the p-cluster",
                "→ policyreports.wgpolicyk8s.io in the p-cluster, group wgpolicyk8s.io",
                "reported state returned to the mailbox",
                "upsynced into the mailbox",
                "through the kyverno-reports export: 1 report",
            ),
        ),
    ],
)
def test_demo_mode_once_runs_every_step(tmp_path: Path, mode: str, steps: tuple[str, ...]) -> None:
    result = subprocess.run(
        [SYNCFLOW, "demo", "--mode", mode, "--once", "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=170,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for step in steps:
        assert step in result.stdout, result.stdout
    assert "demo finished: every step passed" in result.stdout
    assert not any(_group_alive(pid) for pid in _recorded_pids(tmp_path))
