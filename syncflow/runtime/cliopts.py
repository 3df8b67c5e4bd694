"""The command-line flags of settings, one table shared by every command (flag names follow
api-syncagent's where the concept is the same). Each flag's help names its default and its
``SYNCFLOW_*`` variable; a test keeps the defaults shown equal to the settings model's. Only click is
imported here, so ``syncflow --help`` stays fast."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import click


class Duration(click.ParamType):  # type: ignore[type-arg]
    """A duration flag: seconds (``90``) or a Go duration (``90s``, ``1m30s``, ``250ms``), at least
    ``minimum`` seconds (above it, when ``open_minimum``)."""

    name = "duration"

    def __init__(self, minimum: float = 0.0, *, open_minimum: bool = False) -> None:
        self.minimum = minimum
        self.open_minimum = open_minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """Seconds in ``value``; a usage error naming the flag otherwise."""
        from syncflow.gocompat.durations import duration_seconds

        try:
            seconds = float(value) if isinstance(value, int | float) else duration_seconds(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        too_short = seconds <= self.minimum if self.open_minimum else seconds < self.minimum
        if too_short:
            bound = "above" if self.open_minimum else "at least"
            self.fail(f"{value} is too short: want {bound} {self.minimum:g} seconds", param, ctx)
        return seconds


def comma_lists(choices: tuple[str, ...]) -> Callable[[click.Context, click.Parameter, Any], list[str]]:
    """A repeatable flag's callback that also takes comma lists (``--flag=a,b``, api-syncagent's form)
    and checks each item against ``choices``."""

    def flatten(ctx: click.Context, param: click.Parameter, value: Any) -> list[str]:
        items = [item.strip() for text in value or () for item in str(text).split(",") if item.strip()]
        unknown = [item for item in items if item not in choices]
        if unknown:
            raise click.BadParameter(f"{', '.join(unknown)}: want {', '.join(choices)}", ctx, param)
        return items

    return flatten


LOG_FORMATS = ("text", "json", "console")
"""syncflow's log formats, and api-syncagent's (``console`` is ``text``; any case, as ``JSON``)."""


@dataclass(frozen=True)
class Flag:
    """One setting as a flag: its declarations, help and the default shown."""

    setting: str
    decls: tuple[str, ...]
    help: str
    default: str = "none"
    options: dict[str, Any] = field(default_factory=dict)

    def decorator(self) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """The click option (``None`` unless given: the settings' own default then applies)."""
        env = f"SYNCFLOW_{self.setting.upper()}"
        return click.option(
            *self.decls,
            self.setting,
            default=None,
            help=f"{self.help} [default: {self.default}; env: {env}]",
            **self.options,
        )


CONFIG = click.option(
    "--config",
    "config_file",
    envvar="SYNCFLOW_CONFIG",
    type=click.Path(dir_okay=False),
    help="YAML settings file.",
)

AGENT = (
    Flag(
        "redis_url",
        ("--redis-url",),
        "Redis of the work queue (and broker); redis+cluster:// for a Redis Cluster.",
        "redis://127.0.0.1:6379/0",
    ),
    Flag("broker_url", ("--broker-url",), "Celery broker: redis:// or amqp:// (RabbitMQ).", "--redis-url"),
    Flag(
        "agent_name", ("--agent-name",), "Agent name; prefixes all Redis keys, names the Lease.", "syncflow"
    ),
    Flag(
        "log_format",
        ("--log-format",),
        "Log format: text (api-syncagent's console) or json.",
        "text",
        {"type": click.Choice(LOG_FORMATS, case_sensitive=False)},
    ),
)
CONNECT = (
    Flag("kubeconfig", ("--kubeconfig",), "Kubeconfig of the cluster syncflow runs next to.", "in-cluster"),
    Flag("kcp_kubeconfig", ("--kcp-kubeconfig",), "Kubeconfig of kcp; required wherever kcp is used."),
    Flag(
        "kubeconfig_host_override",
        ("--kubeconfig-host-override",),
        "API server URL instead of --kubeconfig's.",
    ),
    Flag(
        "kubeconfig_ca_file_override",
        ("--kubeconfig-ca-file-override",),
        "CA file instead of --kubeconfig's.",
    ),
    Flag("kcp_host_override", ("--kcp-host-override",), "kcp URL instead of --kcp-kubeconfig's."),
    Flag("kcp_ca_file_override", ("--kcp-ca-file-override",), "CA file instead of --kcp-kubeconfig's."),
    Flag(
        "namespace",
        ("--namespace",),
        "Namespace of the leader Lease and the state Secrets.",
        "the pod's own, else default",
    ),
)
SERVE = (
    Flag("metrics_address", ("--metrics-address",), "host:port serving /metrics for Prometheus.", "off"),
    Flag("health_address", ("--health-address",), "host:port serving /healthz and /readyz.", "off"),
)
LEASE = (
    Flag(
        "enable_leader_election",
        ("--enable-leader-election",),
        "One active watcher per agent (Lease election); =false turns it off.",
        "enabled",
        {"is_flag": False, "flag_value": "true", "type": click.BOOL, "metavar": "[=BOOL]"},
    ),
    Flag(
        "lease_duration",
        ("--lease-duration",),
        "How long a standby waits before taking the Lease.",
        "15",
        {"type": Duration(open_minimum=True)},
    ),
    Flag(
        "renew_deadline",
        ("--renew-deadline",),
        "How long a leader may fail to renew before it steps down.",
        "10",
        {"type": Duration(open_minimum=True)},
    ),
    Flag(
        "retry_period",
        ("--retry-period",),
        "Time between Lease attempts.",
        "2",
        {"type": Duration(open_minimum=True)},
    ),
)
PUBLISH = (
    Flag(
        "apiexportendpointslice_ref",
        ("--apiexportendpointslice-ref",),
        "The APIExportEndpointSlice to serve.",
    ),
    Flag(
        "published_resource_selector",
        ("--published-resource-selector",),
        "Serve only the PublishedResources matching this label selector.",
        "all",
    ),
    Flag(
        "disabled_controllers",
        ("--disabled-controllers",),
        "Controllers not to run (repeatable or a comma list): apiexport, apiresourceschema, sync.",
        "none",
        {"multiple": True, "callback": comma_lists(("apiexport", "apiresourceschema", "sync"))},
    ),
)
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease")
ALLOW_SYSTEM_NAMESPACE = Flag(
    "allow_system_namespaces",
    ("--allow-system-namespace",),
    "System namespace copies may be written into (repeatable or a comma list); never by default.",
    "none",
    {"multiple": True, "callback": comma_lists(SYSTEM_NAMESPACES)},
)
SYNC = (
    Flag(
        "resync_period",
        ("--resync-period",),
        "Time between resyncs of each rule.",
        "600",
        {"type": Duration(open_minimum=True)},
    ),
    ALLOW_SYSTEM_NAMESPACE,
    Flag(
        "orphan_policy",
        ("--orphan-policy",),
        "Copies of objects that stop matching a filter: keep or delete.",
        "keep",
        {"type": click.Choice(["keep", "delete"])},
    ),
)
ALL = (*AGENT, *CONNECT, *SERVE, *LEASE, *PUBLISH, *SYNC)


def flags(
    *groups: tuple[Flag, ...], config: bool = True
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command with these groups of flags (and ``--config``)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        for flag in reversed([f for group in groups for f in group]):
            command = flag.decorator()(command)
        return CONFIG(command) if config else command

    return decorate


VERBOSITY = {1: "WARNING", 2: "INFO", 3: "DEBUG", 4: "DEBUG"}
"""Log levels of ``--v`` (kcp's syncer's verbosity)."""


def log_debug(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--log-debug`` (api-syncagent's) and ``--v`` (kcp's syncers'): the log level."""
    command = click.option(
        "--v", "verbosity", type=click.IntRange(1, 4), default=None, help="Log verbosity 1-4 [2]."
    )(command)
    return click.option(
        "--log-debug", is_flag=True, help="Log at debug level [env: SYNCFLOW_LOG_LEVEL=DEBUG]."
    )(command)
