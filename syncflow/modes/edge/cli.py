"""``syncflow edge``: the KCP-Edge syncer as one command, and ``syncflow edge bootstrap`` to register one
(imports stay lazy for a fast --help)."""

from __future__ import annotations

from typing import Any

import click

from syncflow.runtime import agentcli, cliopts


@click.group("edge", invoke_without_command=True)
@agentcli.workspace_option("The mailbox workspace, e.g. root:edge:mb-1.")
@click.option(
    "--poll-period", "resync_period", type=cliopts.Duration(1), default=None, help="Downsync poll [60s]."
)
@click.option("--status-period", type=cliopts.Duration(1), default=None, help="Reported-state poll [15s].")
@click.option(
    "--upsync-period", type=cliopts.Duration(1), default=None, help="Time between upsync polls [15s]."
)
@agentcli.agent_options
@click.pass_context
def edge(
    ctx: click.Context,
    /,
    config_file: str | None,
    workers: int,
    verbosity: int,
    role: str,
    data_dir: str | None,
    **flags: Any,
) -> None:
    """Run the edge syncer of one p-cluster: what the mailbox workspace's EdgeSyncConfigs select goes down
    (renatured), reported state comes back, and upsynced objects are polled up from the p-cluster.

    Register a syncer and get the p-cluster's manifest with 'syncflow edge bootstrap NAME'."""
    if ctx.invoked_subcommand is not None:
        return
    defaults = {"resync_period": 60.0, "status_period": 15.0}
    settings = agentcli.load("edge", config_file, verbosity, defaults, **flags)

    def check() -> None:
        from syncflow.kube.clients import kcp_client
        from syncflow.modes.edge.context import find_mailbox

        find_mailbox(kcp_client(settings), settings)

    agentcli.run(settings, role, workers, data_dir, check)


@edge.command("bootstrap")
@click.argument("name")
@click.option(
    "--workspace", default=None, help="The mailbox workspace, e.g. root:edge:mb-1 [the kubeconfig's]."
)
@click.option("--namespace", default=None, help="The syncer's namespace in the p-cluster [kcp-edge-<id>].")
@agentcli.bootstrap_options
def bootstrap(
    name: str,
    workspace: str | None,
    namespace: str | None,
    output: str,
    kcp_kubeconfig: str | None,
    kcp_namespace: str,
    image: str | None,
    workers: int,
) -> None:
    """Register edge syncer NAME in its mailbox workspace (an EdgeSyncConfig NAME, the syncer's account)
    and write the manifest that runs it in the p-cluster (KubeStellar's 'kubectl kcp workload edge-sync')."""
    from syncflow.bootstrap import manifest
    from syncflow.modes.edge import bootstrap as edge_bootstrap

    options = edge_bootstrap.EdgeBootstrap(
        name, workspace, kcp_namespace, namespace, image or manifest.IMAGE, workers
    )
    agentcli.write_bootstrap(
        kcp_kubeconfig,
        output,
        lambda kcp: edge_bootstrap.bootstrap(kcp, options, lambda line: click.echo(line, err=True)),
    )
