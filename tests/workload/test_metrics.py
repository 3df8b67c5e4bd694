"""The all-in-one workload syncer's /metrics: the supervisor serves its roles' metrics added up
(heartbeats from workers, writes, connection status, queue gauges), every series agent-labelled."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from syncflow.runtime.stack import free_port
from tests.support.scrape import Samples, scrape, value
from tests.support.waiting import wait_for
from tests.support.workload_env import REDIS_URL, workload_environment

pytestmark = pytest.mark.integration


def test_all_in_one_serves_the_whole_agents_metrics(tmp_path: Path) -> None:
    port = free_port()
    with workload_environment(tmp_path, name="metrics") as env:
        env.agent.start(
            "all",
            "workload",
            "--redis-url",
            REDIS_URL,
            "--metrics-address",
            f"127.0.0.1:{port}",
            "--data-dir",
            str(tmp_path / "all"),
        )
        try:
            labels = {"agent": env.agent_name}
            env.kcp.create("/api/v1/namespaces", {"metadata": {"name": "apps"}})
            env.kcp.create(
                "/api/v1/namespaces/apps/configmaps", {"metadata": {"name": "settings"}, "data": {"k": "v"}}
            )

            def settled() -> Samples | None:
                samples = scrape(port)
                written = value(
                    samples,
                    "syncer_resources_synced_total",
                    **labels,
                    resource="configmaps",
                    direction="spec",
                )
                beats = value(samples, "syncer_heartbeat_total", **labels, result="ok")
                # counted when the task has ended, a moment after the heartbeat itself
                tasks = value(
                    samples, "syncflow_queue_tasks_total", **labels, task="syncflow.heartbeat", outcome="ok"
                )
                return samples if written and beats and tasks else None

            samples = wait_for(settled, timeout=60, what=lambda: f"{scrape(port)}\n{env.agent.logs()}")
            assert env.downstream("/api/v1/configmaps", "settings") is not None
            assert value(samples, "syncer_connection_status", **labels, endpoint="cluster") == 1
            assert value(samples, "syncer_connection_status", **labels, endpoint="kcp") == 1
            assert value(samples, "syncflow_redis_up", **labels) == 1
            assert {dict(found)["agent"] for _, found in samples} == {env.agent_name}
        finally:
            env.agent.kill("all", signal.SIGTERM)  # the supervisor stops its roles, then exits
