"""``syncflow workload``: the TMC workload syncer as one command (imports stay lazy for a fast --help)."""

from __future__ import annotations

from typing import Any

import click

from syncflow import agentcli


@click.command("workload")
@click.option("--sync-target-name", default=None, help="The SyncTarget to serve (required).")
@click.option("--sync-target-uid", default=None, help="Its UID: the syncer refuses to start when it differs.")
@click.option(
    "--workspace-cluster", default=None, help="The SyncTarget's workspace, e.g. root:org:ws (required)."
)
@click.option(
    "--resync-period", type=click.FloatRange(min=1), default=None, help="Seconds between resyncs [30]."
)
@click.option(
    "--heartbeat-period", type=click.FloatRange(min=1), default=None, help="Seconds between heartbeats [30]."
)
@agentcli.agent_options
def workload(
    config_file: str | None, workers: int, verbosity: int, role: str, data_dir: str | None, **flags: Any
) -> None:
    """Run the workload syncer for one SyncTarget: every object of its synced types in the kcp workspace
    runs in the physical cluster, status comes back, heartbeats go to the SyncTarget."""
    settings = agentcli.load("workload", config_file, verbosity, {"resync_period": 30.0}, **flags)

    def check() -> None:
        from syncflow.kube.clients import kcp_client
        from syncflow.modes.workload.context import find_workspace

        find_workspace(kcp_client(settings), settings)

    agentcli.run(settings, role, workers, data_dir, check)
