"""``syncflow clusters``: kcp's multi-cluster controllers and syncers as one command, and
``syncflow clusters manifest`` for pull mode (imports stay lazy for a fast --help)."""

from __future__ import annotations

from typing import Any

import click

from syncflow.runtime import agentcli, cliopts


def _resources(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[str] | None:
    return [part for text in value for part in text.split(",") if part] or None


@click.group("clusters", invoke_without_command=True)
@agentcli.workspace_option("The workspace of the Clusters, e.g. root:org:ws.")
@click.option(
    "--resources",
    "cluster_resources",
    multiple=True,
    callback=_resources,
    help="Types to sync: <plural>.<group> or <plural> (core); repeatable, or comma-separated "
    "[deployments.apps].",
)
@click.option("--probe-period", type=cliopts.Duration(0.5), default=None, help="Time between probes [10s].")
@click.option(
    "--cluster-cleanup",
    type=click.Choice(["keep", "delete"]),
    default=None,
    help="What a deleted Cluster's copies become [keep].",
)
@click.option(
    "--only-cluster",
    default=None,
    help="Sync this Cluster only, reached with --cluster-kubeconfig (a pull-mode or hand-run syncer).",
)
@click.option("--resync-period", type=cliopts.Duration(1), default=None, help="Time between resyncs.")
@click.option(
    "--allow-link-local-servers",
    is_flag=True,
    default=None,
    help="Let Clusters name link-local or cloud metadata addresses (169.254.0.0/16, fe80::/10 ...) as "
    "their server or proxy [refused].",
)
@agentcli.agent_options
@click.pass_context
def clusters(
    ctx: click.Context,
    /,
    config_file: str | None,
    workers: int,
    verbosity: int,
    role: str,
    data_dir: str | None,
    **flags: Any,
) -> None:
    """Sync every object labelled workloads.kcp.dev/cluster=<name> in a kcp workspace to the Cluster of
    that name, probe the Clusters, pull their types into kcp and split Deployments over them."""
    if ctx.invoked_subcommand is not None:
        return
    settings = agentcli.load("clusters", config_file, verbosity, {}, **flags)

    def check() -> None:
        from syncflow.kube.clients import load_client
        from syncflow.modes.clusters.context import find_workspace

        find_workspace(load_client(settings.kcp_kubeconfig), settings)

    agentcli.run(settings, role, workers, data_dir, check)


@clusters.command("manifest")
@click.argument("cluster")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-", help="File [stdout]."
)
@click.option("--kcp-kubeconfig", required=True, envvar="SYNCFLOW_KCP_KUBECONFIG", help="Kubeconfig of kcp.")
@click.option(
    "--workspace-cluster", required=True, envvar="SYNCFLOW_WORKSPACE_CLUSTER", help="The Clusters' workspace."
)
@click.option("--agent-name", default="syncflow", envvar="SYNCFLOW_AGENT_NAME", show_default=True)
@click.option(
    "--resources", "types", multiple=True, callback=_resources, help="Types to sync [deployments.apps]."
)
@click.option("--namespace", default="syncflow-syncer", show_default=True, help="Namespace of the syncer.")
@click.option("--image", default=None, help="The syncflow image [syncflow:<version>].")
def manifest(
    cluster: str,
    output: str,
    kcp_kubeconfig: str,
    workspace_cluster: str,
    agent_name: str,
    types: list[str] | None,
    namespace: str,
    image: str | None,
) -> None:
    """Write what to apply in CLUSTER so that a syncer there syncs it with kcp (pull mode).

    Creates (or updates) the syncer's own ServiceAccount syncflow-pull-CLUSTER in the workspace, owned by
    the Cluster, with only the rights the syncer needs there. The output holds that account's kcp
    kubeconfig (in a Secret), never yours: it is written readable by its owner only."""
    from kubernetes.client.exceptions import ApiException

    from syncflow.api.cluster import PATH
    from syncflow.bootstrap.errors import BootstrapError
    from syncflow.bootstrap.manifest import write
    from syncflow.kube.clients import KubeconfigError, for_cluster, load_client
    from syncflow.kube.jsonapi import JsonApi
    from syncflow.modes.clusters.identity import SyncedType
    from syncflow.modes.clusters.manifest import pull_kubeconfig, syncer_manifest

    try:
        client = load_client(kcp_kubeconfig, flag="--kcp-kubeconfig")
        found = JsonApi(for_cluster(client, workspace_cluster)).get(f"{PATH}/{cluster}")
    except KubeconfigError as exc:
        raise click.ClickException(str(exc)) from None
    except ApiException as exc:
        raise click.ClickException(
            f'Cluster "{cluster}" in {workspace_cluster}: {exc.status} {exc.reason}'
            + (" (create it first: kubectl apply -f cluster.yaml)" if exc.status == 404 else "")
        ) from None
    if ((found.get("spec") or {}).get("syncMode") or "Push") == "Push":
        click.echo(
            f'warning: Cluster "{cluster}" has syncMode Push: set spec.syncMode to Pull, or the central '
            "syncflow and this syncer both sync it",
            err=True,
        )
    synced = [SyncedType.parse(t) for t in types or ["deployments.apps"]]
    try:
        own = pull_kubeconfig(
            client, workspace_cluster, found, synced, lambda line: click.echo(line, err=True)
        )
    except BootstrapError as exc:
        raise click.ClickException(str(exc)) from None
    objects = syncer_manifest(
        cluster,
        kcp_kubeconfig=own,
        workspace=workspace_cluster,
        agent=agent_name,
        types=synced,
        namespace=namespace,
        **({"image": image} if image else {}),
    )
    write(objects, output)
    if output != "-":
        click.echo(f"wrote {output}: apply it in cluster {cluster} (kubectl apply -f {output})", err=True)
