"""What the single-command agents (``syncflow workload``, ``syncflow edge``) share: their common flags,
loading their settings, and running all roles or one (imports stay lazy for a fast --help)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from syncflow.runtime import cliopts

if TYPE_CHECKING:
    from syncflow.config import Settings

ROLES = ("all", "watch", "worker", "beat")

_OPTIONS = (
    click.option(
        "--config",
        "config_file",
        envvar="SYNCFLOW_CONFIG",
        type=click.Path(dir_okay=False),
        help="YAML settings file.",
    ),
    click.option("--kcp-kubeconfig", default=None, help="Kubeconfig of kcp (required)."),
    click.option(
        "--cluster-kubeconfig",
        "--kubeconfig",
        "kubeconfig",
        default=None,
        help="Kubeconfig of the cluster the agent syncs to (the physical, edge or service cluster).",
    ),
    click.option(
        "--namespace",
        default=None,
        help="Namespace of the Lease and state Secrets [the pod's own, else default].",
    ),
    click.option(
        "--workers", type=click.IntRange(min=1), default=2, show_default=True, help="Worker processes."
    ),
    click.option(
        "--v", "verbosity", type=click.IntRange(1, 4), default=2, show_default=True, help="Log verbosity 1-4."
    ),
    click.option("--log-debug", is_flag=True, help="Log at debug level (--v=3)."),
    click.option(
        "--role", type=click.Choice(ROLES), default="all", show_default=True, help="Run one role only."
    ),
    click.option("--redis-url", default=None, help="Redis to use (default: start a private one)."),
    click.option("--agent-name", default=None, help="Agent name; prefixes all Redis keys [syncflow]."),
    click.option(
        "--log-format",
        type=click.Choice(cliopts.LOG_FORMATS, case_sensitive=False),
        default=None,
        help="Log format: text (api-syncagent's console) or json.",
    ),
    click.option(
        "--health-address", default=None, help="host:port for /healthz and /readyz (watch and worker roles)."
    ),
    click.option(
        "--metrics-address",
        default=None,
        help="host:port serving /metrics (any role; all: the whole agent's, added up).",
    ),
    click.option("--data-dir", type=click.Path(file_okay=False), default=None, help="Logs and beat state."),
    cliopts.ALLOW_SYSTEM_NAMESPACE.decorator(),
)


def workspace_option(help: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The workspace an agent serves: ``--workspace`` (edge's name) or ``--workspace-cluster`` (kcp's
    syncer's), the same setting in every mode."""
    return click.option("--workspace", "--workspace-cluster", "workspace_cluster", default=None, help=help)


def agent_options(command: Callable[..., None]) -> Callable[..., None]:
    """The flags every single-command agent takes."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def load(
    mode: str, config_file: str | None, verbosity: int, defaults: dict[str, Any], **flags: Any
) -> Settings:
    """The agent's settings: flags, then environment and file, then the mode's own ``defaults``."""
    from syncflow.config import ConfigError, load_settings

    if flags.pop("log_debug", False):
        verbosity = max(verbosity, 3)
    try:
        given = {
            name: value for name, value in flags.items() if value not in ((), [])
        }  # repeatable, not given
        settings = load_settings(config_file, mode=mode, log_level=cliopts.VERBOSITY[verbosity], **given)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    unset = {name: value for name, value in defaults.items() if name not in settings.model_fields_set}
    return settings.model_copy(update=unset)


def run(settings: Settings, role: str, workers: int, data_dir: str | None, check: Callable[[], None]) -> None:
    """Fail fast with ``check`` and a probe of the clusters it talks to (one clear line on stderr, never
    a supervisor restarting children that cannot work), then run every role under a supervisor, or one
    role."""
    from syncflow.config import ConfigError
    from syncflow.kube.clients import KubeconfigError
    from syncflow.runtime.preflight import PreflightError, check_endpoints
    from syncflow.util.paths import state_dir

    if settings.metrics_address and role in ("all", "worker"):  # before the checks' requests count
        from syncflow.metrics import multiprocess

        multiprocess.prepare("agent" if role == "all" else "worker")
    try:
        check_endpoints(settings)
        check()
    except (ConfigError, KubeconfigError, PreflightError) as exc:
        raise click.ClickException(str(exc)) from None
    directory = Path(data_dir) if data_dir else state_dir() / settings.agent_name
    if role == "all":
        from syncflow.runtime.supervisor import Supervisor

        raise SystemExit(Supervisor(settings, directory, workers=workers).run())
    if role == "watch":
        from syncflow.app import modes
        from syncflow.runtime.processes import run_watch

        run_watch(modes.watch_process(settings))
    elif role == "worker":
        from syncflow.queue.layout import CELERY_QUEUES
        from syncflow.runtime.processes import run_worker

        run_worker(settings, queues=CELERY_QUEUES, concurrency=workers, loglevel=settings.log_level)
    else:
        from syncflow.runtime.processes import run_beat

        directory.mkdir(parents=True, exist_ok=True)
        run_beat(settings, schedule=str(directory / "beat-schedule"), loglevel=settings.log_level)


_BOOTSTRAP_OPTIONS = (
    click.option(
        "-o",
        "--output-file",
        "--output",
        "output",
        required=True,
        type=click.Path(dir_okay=False, allow_dash=True),
        help="Manifest file to write for the cluster (- for stdout); it holds a token: kept 0600.",
    ),
    click.option(
        "--kcp-kubeconfig",
        envvar="SYNCFLOW_KCP_KUBECONFIG",
        default=None,
        help="Your kubeconfig of kcp [SYNCFLOW_KCP_KUBECONFIG, else $KUBECONFIG or ~/.kube/config, its "
        "current context, as kcp's kubectl plugins].",
    ),
    click.option(
        "--kcp-namespace",
        default="default",
        show_default=True,
        help="Namespace of the syncer's ServiceAccount in the workspace.",
    ),
    click.option(
        "--syncer-image", "--image", "image", default=None, help="The syncflow image [syncflow:<version>]."
    ),
    click.option(
        "--workers", type=click.IntRange(min=1), default=2, show_default=True, help="Worker processes."
    ),
)


def bootstrap_options(command: Callable[..., None]) -> Callable[..., None]:
    """The flags every bootstrap command takes."""
    for option in reversed(_BOOTSTRAP_OPTIONS):
        command = option(command)
    return command


def your_kubeconfig() -> str:
    """The kubeconfig kubectl would use: the first file of ``$KUBECONFIG``, else ``~/.kube/config``."""
    listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    return listed[0] if listed else os.path.expanduser("~/.kube/config")


def write_bootstrap(
    kcp_kubeconfig: str | None, output: str, build: Callable[[Any], list[dict[str, Any]]]
) -> None:
    """Run ``build`` with the kcp client (progress to stderr), write its manifest to ``output``, then
    tell how to apply it, as kcp's plugins do."""
    from syncflow.bootstrap import manifest
    from syncflow.bootstrap.errors import BootstrapError
    from syncflow.kube.clients import KubeconfigError, load_client

    path = kcp_kubeconfig or your_kubeconfig()
    if kcp_kubeconfig is None:
        click.echo(f"Using kcp from {path} (its current context).", err=True)
    try:
        objects = build(load_client(path, flag="--kcp-kubeconfig"))
    except (BootstrapError, KubeconfigError) as exc:
        raise click.ClickException(str(exc)) from None
    manifest.write(objects, output)
    if output != "-":
        namespace = objects[0]["metadata"]["name"]
        click.echo(
            f"\nWrote the cluster's manifest to {output} for namespace {namespace!r}. Apply it with\n\n"
            f"  KUBECONFIG=<cluster-config> kubectl apply -f {output}\n\nand check the syncer with\n\n"
            f"  KUBECONFIG=<cluster-config> kubectl get deployments -n {namespace}",
            err=True,
        )
