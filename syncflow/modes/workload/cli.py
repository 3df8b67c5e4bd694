"""``syncflow workload``: the TMC workload syncer as one command, and ``syncflow workload sync`` to
register one (imports stay lazy for a fast --help)."""

from __future__ import annotations

from typing import Any

import click

from syncflow.runtime import agentcli, cliopts


def _listed(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.strip() for text in value for part in text.split(",") if part.strip())


def _labels(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> dict[str, str]:
    labels = {}
    for text in _listed(ctx, param, value):
        key, sep, label = text.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{text!r} is not in the format key=value")
        labels[key] = label
    return labels


@click.group("workload", invoke_without_command=True)
@click.option("--sync-target-name", default=None, help="The SyncTarget to serve (required).")
@click.option(
    "--sync-target-uid",
    default=None,
    help="Its UID (required, as kcp's syncer): the syncer refuses to start when it differs.",
)
@agentcli.workspace_option("The SyncTarget's workspace, e.g. root:org:ws (required).")
@click.option("--resync-period", type=cliopts.Duration(1), default=None, help="Time between resyncs [30s].")
@click.option(
    "--heartbeat-period", type=cliopts.Duration(1), default=None, help="Time between heartbeats [30s]."
)
@agentcli.agent_options
@click.pass_context
def workload(
    ctx: click.Context,
    /,
    config_file: str | None,
    workers: int,
    verbosity: int,
    role: str,
    data_dir: str | None,
    **flags: Any,
) -> None:
    """Run the workload syncer for one SyncTarget: every object of its synced types in the kcp workspace
    runs in the physical cluster, status comes back, heartbeats go to the SyncTarget.

    Register a SyncTarget and get the physical cluster's manifest with 'syncflow workload sync NAME'."""
    if ctx.invoked_subcommand is not None:
        return
    settings = agentcli.load("workload", config_file, verbosity, {"resync_period": 30.0}, **flags)

    def check() -> None:
        from syncflow.kube.clients import kcp_client
        from syncflow.modes.workload.context import find_workspace

        find_workspace(kcp_client(settings), settings)

    agentcli.run(settings, role, workers, data_dir, check)


@workload.command("sync")
@click.argument("name")
@click.option("--workspace", default=None, help="The workspace, e.g. root:org:ws [the kubeconfig's].")
@click.option(
    "--resources",
    multiple=True,
    callback=_listed,
    help="Types of root:compute's kubernetes export to sync, <group>/<version>/<plural> (repeatable or "
    "comma-separated) [apps/v1/deployments,v1/services].",
)
@click.option(
    "--apiexports",
    multiple=True,
    callback=_listed,
    help="Whole APIExports to sync, [<workspace path>:]<export> (repeatable or comma-separated).",
)
@click.option("--labels", multiple=True, callback=_labels, help="Labels of the SyncTarget, key=value.")
@click.option("--namespace", default=None, help="The syncer's namespace in the physical cluster [its id].")
@click.option("--all-in-one", is_flag=True, help="One Deployment runs every role (default: one per role).")
@agentcli.bootstrap_options
def sync(
    name: str,
    workspace: str | None,
    resources: tuple[str, ...],
    apiexports: tuple[str, ...],
    labels: dict[str, str],
    namespace: str | None,
    all_in_one: bool,
    output: str,
    kcp_kubeconfig: str | None,
    kcp_namespace: str,
    image: str | None,
    workers: int,
) -> None:
    """Create (or update) SyncTarget NAME and its syncer's account in a kcp workspace, and write the
    manifest that runs the syncer in the physical cluster (kcp's 'kubectl kcp workload sync')."""
    from syncflow.bootstrap import manifest
    from syncflow.modes.workload import bootstrap

    options = bootstrap.WorkloadSync(
        name,
        workspace,
        resources or (() if apiexports else bootstrap.DEFAULT_RESOURCES),
        apiexports,
        labels,
        kcp_namespace,
        namespace,
        image or manifest.IMAGE,
        workers,
        all_in_one,
    )
    agentcli.write_bootstrap(
        kcp_kubeconfig,
        output,
        lambda kcp: bootstrap.sync(kcp, options, lambda line: click.echo(line, err=True)),
    )
