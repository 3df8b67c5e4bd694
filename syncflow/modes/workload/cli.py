"""``syncflow workload``: the TMC workload syncer as one command (imports stay lazy for a fast --help)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

VERBOSITY = {1: "WARNING", 2: "INFO", 3: "DEBUG", 4: "DEBUG"}
ROLES = ("all", "watch", "worker", "beat")


@click.command("workload")
@click.option(
    "--config",
    "config_file",
    envvar="SYNCFLOW_CONFIG",
    type=click.Path(dir_okay=False),
    help="YAML settings file.",
)
@click.option("--sync-target-name", default=None, help="The SyncTarget to serve (required).")
@click.option("--sync-target-uid", default=None, help="Its UID: the syncer refuses to start when it differs.")
@click.option(
    "--workspace-cluster", default=None, help="The SyncTarget's workspace, e.g. root:org:ws (required)."
)
@click.option("--kcp-kubeconfig", default=None, help="Kubeconfig of kcp (required).")
@click.option("--cluster-kubeconfig", "kubeconfig", default=None, help="Kubeconfig of the physical cluster.")
@click.option("--namespace", default=None, help="Physical-cluster namespace of the Lease and state Secrets.")
@click.option(
    "--resync-period", type=click.FloatRange(min=1), default=None, help="Seconds between resyncs [30]."
)
@click.option(
    "--heartbeat-period", type=click.FloatRange(min=1), default=None, help="Seconds between heartbeats [30]."
)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="Worker processes.")
@click.option(
    "--v", "verbosity", type=click.IntRange(1, 4), default=2, show_default=True, help="Log verbosity 1-4."
)
@click.option("--role", type=click.Choice(ROLES), default="all", show_default=True, help="Run one role only.")
@click.option("--redis-url", default=None, help="Redis to use (default: start a private one).")
@click.option("--agent-name", default=None, help="Agent name; prefixes all Redis keys [syncflow].")
@click.option("--log-format", type=click.Choice(["text", "json"]), default=None)
@click.option("--health-address", default=None, help="host:port for /healthz and /readyz (watch role).")
@click.option(
    "--data-dir", type=click.Path(file_okay=False), default=None, help="Logs and beat state (all role)."
)
def workload(
    config_file: str | None, workers: int, verbosity: int, role: str, data_dir: str | None, **flags: Any
) -> None:
    """Run the workload syncer for one SyncTarget: every object of its synced types in the kcp workspace
    runs in the physical cluster, status comes back, heartbeats go to the SyncTarget."""
    from syncflow.config import ConfigError, load_settings
    from syncflow.kube.clients import KubeconfigError

    try:
        settings = load_settings(config_file, mode="workload", log_level=VERBOSITY[verbosity], **flags)
        defaults = {"resync_period": 30.0} if "resync_period" not in settings.model_fields_set else {}
        settings = settings.model_copy(update=defaults)
        from syncflow.kube.clients import load_client
        from syncflow.modes.workload.context import find_workspace

        find_workspace(load_client(settings.kcp_kubeconfig), settings)  # fail fast, before any process starts
    except (ConfigError, KubeconfigError) as exc:
        raise click.ClickException(str(exc)) from None
    if role == "all":
        from syncflow.paths import state_dir
        from syncflow.supervisor import Supervisor

        directory = Path(data_dir) if data_dir else state_dir() / settings.agent_name
        raise SystemExit(Supervisor(settings, directory, workers=workers).run())
    if role == "watch":
        from syncflow import modes

        modes.watch_process(settings).run()
    elif role == "worker":
        from syncflow.queue.layout import CELERY_QUEUES
        from syncflow.queue.processes import run_worker

        run_worker(settings, queues=CELERY_QUEUES, concurrency=workers, loglevel=settings.log_level)
    else:
        from syncflow.paths import beat_schedule
        from syncflow.queue.processes import run_beat

        schedule = Path(data_dir) / "beat-schedule" if data_dir else beat_schedule()
        schedule.parent.mkdir(parents=True, exist_ok=True)
        run_beat(settings, schedule=str(schedule), loglevel=settings.log_level)
