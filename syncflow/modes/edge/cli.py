"""``syncflow edge``: the KCP-Edge syncer as one command (imports stay lazy for a fast --help)."""

from __future__ import annotations

from typing import Any

import click

from syncflow import agentcli


@click.command("edge")
@click.option(
    "--workspace", "workspace_cluster", default=None, help="The mailbox workspace, e.g. root:edge:mb-1."
)
@click.option(
    "--poll-period", "resync_period", type=click.FloatRange(min=1), default=None, help="Downsync poll [60]."
)
@click.option("--status-period", type=click.FloatRange(min=1), default=None, help="Reported-state poll [15].")
@click.option(
    "--upsync-period", type=click.FloatRange(min=1), default=None, help="Seconds between upsync polls [15]."
)
@agentcli.agent_options
def edge(
    config_file: str | None, workers: int, verbosity: int, role: str, data_dir: str | None, **flags: Any
) -> None:
    """Run the edge syncer of one p-cluster: what the mailbox workspace's EdgeSyncConfigs select goes down
    (renatured), reported state comes back, and upsynced objects are polled up from the p-cluster."""
    defaults = {"resync_period": 60.0, "status_period": 15.0}
    settings = agentcli.load("edge", config_file, verbosity, defaults, **flags)

    def check() -> None:
        from syncflow.kube.clients import kcp_client
        from syncflow.modes.edge.context import find_mailbox

        find_mailbox(kcp_client(settings), settings)

    agentcli.run(settings, role, workers, data_dir, check)
