"""The ``syncflow`` command line. Commands only parse their arguments and delegate.

Implementations are imported inside the commands, so ``syncflow --help`` stays fast and a command
never needs the packages of another (``devcluster`` and ``demo`` are extras).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from syncflow import __version__
from syncflow.demo import MODES as DEMO_MODES
from syncflow.modes.clusters.cli import clusters as clusters_command
from syncflow.modes.edge.cli import edge as edge_command
from syncflow.modes.publish.cli import publish as publish_command
from syncflow.modes.workload.cli import workload as workload_command
from syncflow.queue.layout import CELERY_QUEUES
from syncflow.runtime import cliopts

if TYPE_CHECKING:
    from syncflow.config import Settings
    from syncflow.queue.service import QueueService


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="syncflow")
def main() -> None:
    """Keep Kubernetes objects in sync between kcp workspaces and service clusters."""


def _require_extra(extra: str, command: str) -> None:
    from syncflow.cli.extras import MissingExtraError, require

    try:
        require(extra, command)
    except MissingExtraError as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=6443,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0 picks a free one).",
)
@click.option(
    "--kubeconfig",
    "kubeconfig_path",
    default="devcluster.kubeconfig",
    show_default=True,
    type=click.Path(dir_okay=False, writable=True),
    help="Where to write the kubeconfig.",
)
@click.option(
    "--token",
    "tokens",
    multiple=True,
    metavar="[IDENTITY=]TOKEN",
    help="Require a bearer token (repeatable; IDENTITY defaults to admin). Implies --tls.",
)
@click.option(
    "--tls/--no-tls",
    default=None,
    help="Serve HTTPS with a generated certificate (default: when a token is set).",
)
@click.option(
    "--kcp", is_flag=True, help="Serve kcp: workspaces, APIExports, APIBindings, virtual workspaces."
)
@click.option(
    "--sync-target-heartbeat-threshold",
    default="60s",
    show_default=True,
    type=cliopts.Duration(open_minimum=True),
    help="kcp: time without a SyncTarget heartbeat before HeartbeatReady and Ready turn False.",
)
@click.option(
    "--external-url", default=None, help="URL to advertise in kcp objects (default: the bound one)."
)
@click.option(
    "--bookmark-interval",
    default="60s",
    show_default=True,
    type=cliopts.Duration(0.05),
    help="Time between watch BOOKMARK events.",
)
@click.option(
    "--watch-history",
    default=10_000,
    show_default=True,
    type=click.IntRange(min=1),
    help=(
        "Events kept for resuming watches; older resourceVersions get 410 Gone. A watch that falls"
        " this many events behind is ended, to resume from its last resourceVersion."
    ),
)
@click.option(
    "--request-timeout",
    default="60s",
    show_default=True,
    type=cliopts.Duration(open_minimum=True),
    help="How long a non-watch request may take before it is answered 504.",
)
@click.option(
    "--latency",
    default="0",
    show_default=True,
    type=cliopts.Duration(),
    help="Delay added before every API request is served, to play a remote API server "
    "(e.g. 20ms; health checks are not delayed).",
)
@click.option(
    "--simulate/--no-simulate",
    default=True,
    show_default=True,
    help="Run simulated controllers (a Ready node, workloads' pods, status, Services, garbage collection).",
)
@click.option(
    "--load-balancer-ips",
    default=None,
    metavar="FIRST-LAST|CIDR",
    help="Simulation: the pool LoadBalancer Services get status.loadBalancer.ingress[].ip from "
    "(default: 172.18.255.200-172.18.255.250).",
)
@click.option(
    "--load-balancer-delay",
    default="500ms",
    show_default=True,
    type=cliopts.Duration(),
    help="Simulation: time before a LoadBalancer Service gets its address.",
)
def devcluster(
    host: str,
    port: int,
    kubeconfig_path: str,
    tokens: tuple[str, ...],
    tls: bool | None,
    kcp: bool,
    sync_target_heartbeat_threshold: float,
    external_url: str | None,
    bookmark_interval: float,
    watch_history: int,
    request_timeout: float,
    latency: float,
    simulate: bool,
    load_balancer_ips: str | None,
    load_balancer_delay: float,
) -> None:
    """Run the embedded Kubernetes-compatible API server (in memory); --kcp for a kcp."""
    from pathlib import Path

    _require_extra("devcluster", "syncflow devcluster")
    from syncflow.devcluster.runner import RunOptions, parse_tokens, run
    from syncflow.devcluster.simulate.config import SimulationConfig, parse_ip_range

    try:
        identities = parse_tokens(tokens)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--token") from None
    simulation = SimulationConfig(load_balancer_delay=load_balancer_delay)
    if load_balancer_ips is not None:
        try:
            parse_ip_range(load_balancer_ips)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--load-balancer-ips") from None
        simulation = simulation.model_copy(update={"load_balancer_ips": load_balancer_ips})
    run(
        RunOptions(
            host=host,
            port=port,
            kubeconfig=Path(kubeconfig_path),
            tokens=identities,
            tls=tls,
            kcp=kcp,
            sync_target_heartbeat_threshold=sync_target_heartbeat_threshold,
            external_url=external_url,
            bookmark_interval=bookmark_interval,
            watch_history=watch_history,
            request_timeout=request_timeout,
            latency=latency,
            simulation=simulation if simulate else None,
        )
    )


# --- work queue, failures, worker and beat (logic lives in syncflow.queue) ---


def _settings(
    config_file: str | None, log_debug: bool = False, verbosity: int | None = None, **flags: Any
) -> Settings:
    """Settings from flags (unset ones are None or, for repeatable flags, empty), environment and file."""
    from syncflow.config import ConfigError, load_settings

    given = {name: value for name, value in flags.items() if value not in (None, (), [])}
    if verbosity is not None:
        given["log_level"] = cliopts.VERBOSITY[verbosity]
    if log_debug:
        given["log_level"] = "DEBUG"
    try:
        return load_settings(config_file, **given)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc


def _preflight(settings: Settings, role: str) -> None:
    """Fail at once with one line when a setting cannot work (see syncflow.runtime.preflight)."""
    from syncflow.runtime.preflight import PreflightError, check
    from syncflow.util.logs import configure_logging

    configure_logging(settings.log_format, settings.log_level, agent=settings.qualified_agent_name)
    try:
        check(settings, role)  # type: ignore[arg-type]
    except PreflightError as exc:
        raise click.ClickException(str(exc)) from None


def _service(settings: Settings) -> QueueService:
    from syncflow import tasks

    tasks.bind(settings)
    return tasks.runtime.service


def _reports_unreachable_redis(command: Callable[..., None]) -> Callable[..., None]:
    """A Redis connection failure ends the command with one line naming the URL, not a traceback."""

    @functools.wraps(command)
    def run(**kwargs: Any) -> None:
        from redis.exceptions import ConnectionError, TimeoutError

        from syncflow import tasks
        from syncflow.queue.broker import BrokerUnavailableError
        from syncflow.util.neterrors import display_url, network_reason

        try:
            command(**kwargs)
        except (ConnectionError, TimeoutError) as exc:
            url = display_url(tasks.runtime.settings.redis_url)
            raise SystemExit(f"error: cannot reach Redis at {url}: {network_reason(exc)}") from None
        except BrokerUnavailableError as exc:
            raise SystemExit(f"error: cannot reach the broker: {exc}") from None

    return run


@main.command("queue")
@cliopts.flags(cliopts.AGENT)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--watch", is_flag=True, help="Refresh until interrupted.")
@click.option(
    "--interval",
    default="2s",
    show_default=True,
    type=cliopts.Duration(0.1),
    help="Time between refreshes with --watch.",
)
@_reports_unreachable_redis
def queue_command(as_json: bool, watch: bool, interval: float, config_file: str | None, **flags: Any) -> None:
    """Show per queue: dirty, pending, leased, delayed and parked keys, and broker messages."""
    from syncflow.queue import report

    service = _service(_settings(config_file, **flags))
    if watch:
        report.watch_snapshot(service, interval, click.echo)
    snapshot = report.queue_snapshot(service)
    click.echo(json.dumps(snapshot, indent=2) if as_json else report.format_snapshot(snapshot))


@main.group()
def failures() -> None:
    """List, inspect and replay parked keys (failures that retrying could not fix)."""


@failures.command("list")
@cliopts.flags(cliopts.AGENT)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--match", default="*", show_default=True, help="Only keys matching this glob.")
@click.option(
    "--limit", default=1000, show_default=True, type=click.IntRange(min=1), help="Show at most this many."
)
@_reports_unreachable_redis
def failures_list(as_json: bool, match: str, limit: int, config_file: str | None, **flags: Any) -> None:
    """One line per parked key (the first --limit by key): attempts, first/last failure, cause, error."""
    from syncflow.queue import report

    service = _service(_settings(config_file, **flags))
    parked = service.parked(match, limit)
    output = report.format_failures(parked, as_json=as_json)
    if output:
        click.echo(output)
    if len(parked) == limit and (total := service.parked_count(match)) > limit:
        click.echo(f"showing {limit} of {total} parked keys (--limit)", err=True)


@failures.command("show")
@cliopts.flags(cliopts.AGENT)
@click.argument("key")
@_reports_unreachable_redis
def failures_show(key: str, config_file: str | None, **flags: Any) -> None:
    """The full last error and traceback of KEY."""
    from syncflow.queue import report

    failure = _service(_settings(config_file, **flags)).failure(key)
    if failure is None:
        raise click.ClickException(f"no failure recorded for {key}")
    click.echo(report.format_failure(failure))


@failures.command("replay")
@cliopts.flags(cliopts.AGENT)
@click.argument("keys", nargs=-1)
@click.option("--all", "replay_all", is_flag=True, help="Replay every parked key (see --match).")
@click.option("--match", default="*", show_default=True, help="With --all: only keys matching this glob.")
@_reports_unreachable_redis
def failures_replay(
    keys: tuple[str, ...], replay_all: bool, match: str, config_file: str | None, **flags: Any
) -> None:
    """Unpark KEYS (or --all) and process them again."""
    if bool(keys) == replay_all:
        raise click.UsageError("give KEYS or --all, not both or neither")
    service = _service(_settings(config_file, **flags))
    if replay_all:
        click.echo(f"replayed {service.replay_matching(match)} keys")
        return
    missing = [key for key in keys if not service.replay(key)]
    click.echo(f"replayed {len(keys) - len(missing)} keys")
    if missing:
        raise click.ClickException("not parked: " + " ".join(missing))


@main.command()
@cliopts.flags(cliopts.AGENT, cliopts.CONNECT, cliopts.SERVE, cliopts.PUBLISH, cliopts.SYNC[:2])
@cliopts.log_debug
@click.option(
    "-Q",
    "--queues",
    default=",".join(CELERY_QUEUES),
    show_default=True,
    help="Comma-separated Celery queues to consume.",
)
@click.option(
    "-c",
    "--concurrency",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="Worker processes (prefork).",
)
@click.option("-I", "--include", multiple=True, help="Module defining keyed tasks (repeatable).")
@click.option("-l", "--loglevel", default=None, help="Log level (default: the log_level setting, INFO).")
@click.option("-n", "--hostname", default=None, help="Worker node name (Celery's %h patterns work).")
def worker(
    *,
    queues: str,
    concurrency: int,
    include: tuple[str, ...],
    loglevel: str | None,
    hostname: str | None,
    config_file: str | None,
    **flags: Any,
) -> None:
    """Run a Celery worker for syncflow's keyed tasks (checks Redis and both clusters first)."""
    from syncflow.runtime.processes import run_worker

    settings = _settings(config_file, **flags)
    if settings.metrics_address:  # before any metric exists: the preflight's requests count already
        from syncflow.metrics import multiprocess

        multiprocess.prepare("worker")
    _preflight(settings, "worker")
    run_worker(
        settings,
        queues=[q for q in queues.split(",") if q],
        concurrency=concurrency,
        include=include,
        loglevel=loglevel or settings.log_level,
        hostname=hostname,
    )


@main.command()
@cliopts.flags(cliopts.AGENT)
@click.option(
    "-s",
    "--schedule",
    envvar="SYNCFLOW_BEAT_SCHEDULE",
    show_envvar=True,
    default=None,
    type=click.Path(dir_okay=False),
    help="Beat's state file; its directory is created. [default: $XDG_STATE_HOME/syncflow/beat-schedule]",
)
@click.option("-l", "--loglevel", default=None, help="Log level (default: the log_level setting, INFO).")
@cliopts.flags(cliopts.SERVE[:1], config=False)
def beat(schedule: str | None, loglevel: str | None, config_file: str | None, **flags: Any) -> None:
    """Run Celery beat: the queue pump every second (safe to run twice)."""
    from pathlib import Path

    from syncflow.runtime.processes import run_beat
    from syncflow.util.paths import beat_schedule

    settings = _settings(config_file, **flags)
    _preflight(settings, "beat")
    path = Path(schedule) if schedule else beat_schedule()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        message = f"--schedule: cannot create directory {path.parent}: {exc.strerror}"
        raise click.ClickException(message) from None
    run_beat(settings, schedule=str(path), loglevel=loglevel or settings.log_level)


@main.command()
@click.option("--apply", "apply_", is_flag=True, help="Create or update the CRDs in the cluster.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig (with --apply).")
@click.option("--context", default=None, help="Kubeconfig context (with --apply).")
@click.option(
    "--timeout",
    default="60s",
    show_default=True,
    type=cliopts.Duration(),
    help="How long to wait until every CRD is Established (with --apply).",
)
@click.option(
    "--mode",
    envvar="SYNCFLOW_MODE",
    default="publish",
    show_default=True,
    type=click.Choice(["publish", "workload", "edge", "clusters", "all"]),
    help="Whose CRDs: publish's PublishedResource (for the service cluster), workload's SyncTarget, "
    "edge's EdgeSyncConfig (for a mailbox workspace), clusters' Cluster, or all.",
)
def crds(apply_: bool, kubeconfig: str | None, context: str | None, timeout: float, mode: str) -> None:
    """Print the CRDs a mode is configured with as YAML, or install them with --apply."""
    from syncflow.api import crdgen, install

    if not apply_:
        click.echo(crdgen.to_yaml(crdgen.crds_for(mode)), nl=False)
        return
    try:
        install.apply_crds(
            crdgen.crds_for(mode), kubeconfig=kubeconfig, context=context, timeout=timeout, echo=click.echo
        )
    except install.InstallError as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@cliopts.flags(
    cliopts.AGENT, cliopts.CONNECT, cliopts.SERVE, cliopts.LEASE, cliopts.PUBLISH, cliopts.SYNC[2:]
)
@cliopts.log_debug
def watch(config_file: str | None, **flags: Any) -> None:
    """Watch the service cluster and kcp and enqueue sync work (publish mode); never writes objects."""
    from syncflow.app import modes
    from syncflow.config import ConfigError
    from syncflow.kube.clients import KubeconfigError
    from syncflow.kube.leader import LeaderElectionError
    from syncflow.runtime.processes import run_watch

    settings = _settings(config_file, **flags)
    _preflight(settings, "watch")
    try:
        process = modes.watch_process(settings)
    except (ConfigError, KubeconfigError) as exc:
        raise click.ClickException(str(exc)) from None
    try:
        run_watch(process)
    except LeaderElectionError as exc:
        raise click.ClickException(str(exc)) from None


main.add_command(publish_command)
main.add_command(workload_command)
main.add_command(edge_command)
main.add_command(clusters_command)


@main.command()
@click.option(
    "--workdir",
    type=click.Path(file_okay=False),
    default=None,
    help="Directory for logs and kubeconfigs (default: a new temporary one).",
)
@click.option(
    "--redis-url",
    envvar="SYNCFLOW_REDIS_URL",
    default=None,
    help="Use this Redis (default: a private redis-server, else the embedded one).",
)
@click.option("--once", is_flag=True, help="Run the scenario once and exit (non-zero on failure).")
@click.option(
    "--mode",
    type=click.Choice(DEMO_MODES),
    default="publish",
    show_default=True,
    help="Which system to show: publish (api-syncagent), workload (TMC syncer), edge (KCP-Edge syncer), "
    "clusters (kcp's multi-cluster: Clusters, label-scheduled sync, a split Deployment).",
)
def demo(workdir: str | None, redis_url: str | None, once: bool, mode: str) -> None:
    """Run kcp, a cluster, Redis and syncflow locally, and play one mode's scenario step by step."""
    from pathlib import Path

    _require_extra("demo", "syncflow demo")
    from syncflow.demo.runner import DemoOptions, run

    raise SystemExit(run(DemoOptions(Path(workdir) if workdir else None, redis_url, once, mode=mode)))


# --- the sync console (logic lives in syncflow.console) ---

MODE = cliopts.Flag(
    "mode",
    ("--mode",),
    "The agent's mode: publish, workload, edge or clusters.",
    "publish",
    {"type": click.Choice(["publish", "workload", "edge", "clusters"])},
)


def _console_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """What ``syncflow console`` and ``syncflow status`` read beyond the agent's settings."""
    for option in reversed(
        (
            click.option(
                "--workspaces",
                envvar="SYNCFLOW_CONSOLE_WORKSPACES",
                default="",
                help="Only these workspaces (logical clusters; a comma list, globs allowed); others are "
                "invisible. [default: all; env: SYNCFLOW_CONSOLE_WORKSPACES]",
            ),
            click.option(
                "--metrics-url",
                "metrics_urls",
                multiple=True,
                envvar="SYNCFLOW_CONSOLE_METRICS_URLS",
                help="An agent process's /metrics URL, for the sync latency (repeatable; env: "
                "space-separated).",
            ),
        )
    ):
        command = option(command)
    return command


def _reader(settings: Settings, workspaces: str, metrics_urls: tuple[str, ...], **extra: Any) -> Any:
    from syncflow.console.filters import Scope
    from syncflow.console.wiring import build_reader

    return build_reader(settings, scope=Scope.parse(workspaces), metrics_urls=metrics_urls, **extra)


@main.command()
@cliopts.flags(cliopts.AGENT, cliopts.CONNECT, cliopts.PUBLISH, (MODE,))
@_console_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8080, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on."
)
@click.option(
    "--token",
    envvar="SYNCFLOW_CONSOLE_TOKEN",
    default="",
    help="Require this bearer token. [env: SYNCFLOW_CONSOLE_TOKEN; basic auth instead: "
    "SYNCFLOW_CONSOLE_BASIC_AUTH=user:password]",
)
@click.option(
    "--flower-url", envvar="SYNCFLOW_CONSOLE_FLOWER_URL", default="", help="Flower, to link to a key's task."
)
@_reports_unreachable_redis
def console(
    *,
    workspaces: str,
    metrics_urls: tuple[str, ...],
    host: str,
    port: int,
    token: str,
    flower_url: str,
    config_file: str | None,
    **flags: Any,
) -> None:
    """Serve the sync console: objects synced, pending, retrying, parked and why, with replay."""
    import os

    _require_extra("console", "syncflow console")
    from syncflow.console.security import Auth, InsecureBindError
    from syncflow.console.server import serve
    from syncflow.util.logs import configure_logging

    settings = _settings(config_file, **flags)
    configure_logging(settings.log_format, settings.log_level, agent=settings.qualified_agent_name)
    try:
        auth = Auth(token=token, basic=os.environ.get("SYNCFLOW_CONSOLE_BASIC_AUTH", ""))
        auth.check_bind(host)
    except (ValueError, InsecureBindError) as exc:
        raise click.ClickException(str(exc)) from None
    reader = _reader(settings, workspaces, metrics_urls, flower_url=flower_url)
    reader.service.redis.ping()  # one clear line now when Redis is away
    serve(reader, auth, host, port)


@main.command()
@cliopts.flags(cliopts.AGENT, cliopts.CONNECT, cliopts.PUBLISH, (MODE,))
@_console_options
@click.argument("key", required=False)
@click.option(
    "-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True
)
@click.option("--objects", "list_objects", is_flag=True, help="List objects (implied by any filter).")
@click.option("--rule", default="", help="Objects of this rule.")
@click.option("--workspace", default="", help="Objects of this workspace.")
@click.option(
    "--ns", "object_namespace", default="", help="Objects in this namespace (--namespace is the agent's)."
)
@click.option("--name", default="", help="Objects whose name contains this (or matches this glob).")
@click.option(
    "--state", default="", type=click.Choice(["", "synced", "pending", "running", "retrying", "parked"])
)
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 500), help="Objects per page.")
@click.option("--continue", "token", default=None, help="The continue token a previous page printed.")
@click.option("-w", "--watch", is_flag=True, help="Print again every --interval until interrupted.")
@click.option("--interval", default="2s", show_default=True, type=cliopts.Duration(0.1))
@_reports_unreachable_redis
def status(
    *,
    key: str | None,
    output: str,
    list_objects: bool,
    rule: str,
    workspace: str,
    object_namespace: str,
    name: str,
    state: str,
    limit: int,
    token: str | None,
    watch: bool,
    interval: float,
    workspaces: str,
    metrics_urls: tuple[str, ...],
    config_file: str | None,
    **flags: Any,
) -> None:
    """The agent's objects by rule and workspace (no arguments), a list of objects (a filter or
    --objects), or one KEY's state and last error, as the console shows them."""
    import time

    from syncflow.console import table
    from syncflow.console.filters import FilterError, Filters
    from syncflow.console.pages import TokenError

    reader = _reader(_settings(config_file, **flags), workspaces, metrics_urls, with_sides=False)
    params = {
        "rule": rule,
        "workspace": workspace,
        "namespace": object_namespace,
        "name": name,
        "state": state,
    }
    try:
        filters = Filters.of(params)
    except FilterError as exc:
        raise click.UsageError(str(exc)) from None

    def render() -> str:
        if key:
            detail = reader.object(key, sides=False)
            if detail is None:
                raise click.ClickException(f"no key {key}")
            return table.detail_text(detail) if output == "table" else table.dump(detail, output)
        if list_objects or any(params.values()):
            try:
                page = reader.objects(filters, limit, token)
            except TokenError as exc:
                raise click.UsageError(str(exc)) from None
            if output != "table":
                return table.dump(page, output)
            more = f"\n\nmore: --continue {page.continue_}" if page.continue_ else ""
            return table.objects_table(page) + more
        reader.counter.forget()
        o = reader.overview()
        return table.overview_table(o) if output == "table" else table.dump(o, output)

    while True:
        text = render()
        if not watch:
            click.echo(text)
            return
        click.clear()
        click.echo(text)
        time.sleep(interval)
