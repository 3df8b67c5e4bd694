"""The one settings model of syncflow (docs/architecture.md §17).

Values come from, highest priority first: command-line flags, ``SYNCFLOW_*`` environment variables,
and an optional YAML file (``--config`` or ``SYNCFLOW_CONFIG``). Errors name the bad field.
"""

from __future__ import annotations

import os
import re
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    PositiveFloat,
    PositiveInt,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from syncflow.gocompat.durations import PositiveSeconds, Seconds
from syncflow.util.selectors import LabelSelector

_config_file: ContextVar[Path | None] = ContextVar("syncflow_config_file", default=None)

DNS1035_LABEL = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


REDIS_SCHEMES = ("redis", "rediss")
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
AMQP_SCHEMES = ("amqp", "amqps", "pyamqp")


def is_cluster_url(url: str) -> bool:
    """Whether a Redis URL names a Redis Cluster (``redis+cluster://`` or ``rediss+cluster://``)."""
    return url.partition("://")[0] in CLUSTER_SCHEMES


class ConfigError(ValueError):
    """Configuration is missing or invalid; the message names every bad field."""


class EndpointLimit(BaseModel):
    """Request budget of one API endpoint, shared by all workers."""

    model_config = {"extra": "forbid"}

    qps: PositiveFloat
    burst: PositiveInt


ModeName = Literal["publish", "workload", "edge", "clusters"]
"""The modes, each registered in ``syncflow.app.modes.MODES``."""

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def own_namespace() -> str:
    """The namespace syncflow's pod runs in (its service account's), or ``default`` outside a cluster —
    so the Lease and state need no ``--namespace`` where api-syncagent requires one."""
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text(encoding="utf-8").strip() or "default"
    except OSError:
        return "default"


def _log_format(value: Any) -> Any:
    """api-syncagent's log format names (``Console``, ``JSON``) as syncflow's (``text``, ``json``)."""
    if isinstance(value, str):
        lowered = value.lower()
        return "text" if lowered == "console" else lowered
    return value


class Settings(BaseSettings):
    """All syncflow settings. Durations are seconds, given as a number (``90``) or a Go duration
    (``90s``, ``1m30s``, ``250ms``)."""

    model_config = SettingsConfigDict(env_prefix="SYNCFLOW_", extra="forbid", validate_default=True)

    redis_url: str = Field(
        "redis://127.0.0.1:6379/0",
        description="Redis of the work queue's state (and the broker unless broker_url is set); "
        "redis+cluster://host:port (or rediss+cluster://) for a Redis Cluster, given one of its nodes.",
    )
    broker_url: str | None = Field(
        None,
        description="Celery broker: redis://… or amqp://… (RabbitMQ, one vhost per agent); "
        "default: redis_url, which must then be a single Redis.",
    )
    broker_quorum_queues: bool = Field(
        False, description="RabbitMQ broker: declare syncflow's queues as quorum queues (replicated)."
    )
    agent_name: str = Field(
        "syncflow", pattern=DNS1035_LABEL, description="Names this agent; prefixes all its Redis keys."
    )
    log_format: Annotated[Literal["text", "json"], BeforeValidator(_log_format)] = "text"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="Least severe level logged."
    )
    preflight: bool = Field(
        True,
        description="Check Redis and the clusters at start and refuse to start when they cannot work "
        "(off only for processes that run custom task modules without clusters, e.g. queue tests).",
    )
    mode: ModeName = Field(
        "publish",
        description="Which system syncflow is: publish (api-syncagent), workload (TMC syncer), edge, "
        "clusters (kcp's multi-cluster controllers).",
    )
    task_modules: list[str] = Field(
        default_factory=list,
        description="More modules defining keyed tasks, imported by workers besides the mode's own.",
    )

    task_time_limit: PositiveSeconds = Field(60.0, description="Hard time limit of one keyed task.")
    lease_ttl: PositiveSeconds = Field(
        90.0, description="How long a claimed key stays leased without renewal."
    )
    visibility_timeout: PositiveSeconds = Field(
        600.0, description="Redis broker: redeliver an unacked message after this long."
    )
    backoff_base: PositiveSeconds = Field(0.005, description="First retry delay; doubles per failure.")
    backoff_cap: PositiveSeconds = Field(300.0, description="Longest retry delay.")
    max_attempts: PositiveInt = Field(15, description="Unclassified errors park the key after this many.")
    pump_grace: PositiveSeconds = Field(
        60.0,
        description="Republish a pending key when a broker scan begun this long after its message "
        "was sent did not find the message.",
    )
    pump_batch: PositiveInt = Field(
        1000, description="Keys moved per pump script call; broker messages read per scan chunk."
    )
    pump_budget: PositiveSeconds = Field(
        0.5, description="Seconds one pump run may work; what is left waits for the next run."
    )

    endpoint_qps: PositiveFloat = Field(
        200.0, description="Default requests per second per endpoint, for all workers of the agent together."
    )
    endpoint_burst: PositiveInt = Field(400, description="Default burst per endpoint.")
    endpoint_limits: dict[str, EndpointLimit] = Field(
        default_factory=dict, description="Per-endpoint overrides of qps/burst, by endpoint name."
    )

    # Endpoints and the publish mode; flag names follow api-syncagent's.
    kubeconfig: str | None = Field(
        None, description="Kubeconfig of the service cluster (default: in-cluster, then ~/.kube/config)."
    )
    kcp_kubeconfig: str | None = Field(
        None,
        description="Kubeconfig of kcp, pointing at the workspace that holds the APIExportEndpointSlice "
        "(required wherever kcp is used: never taken from ~/.kube/config).",
    )
    kubeconfig_host_override: str | None = Field(
        None, description="Use this API server URL instead of the one in --kubeconfig."
    )
    kubeconfig_ca_file_override: str | None = Field(
        None, description="Trust this CA file instead of the one in --kubeconfig."
    )
    kcp_host_override: str | None = Field(
        None, description="Use this kcp URL instead of the one in --kcp-kubeconfig."
    )
    kcp_ca_file_override: str | None = Field(
        None, description="Trust this CA file instead of the one in --kcp-kubeconfig."
    )
    disabled_controllers: list[Literal["apiexport", "apiresourceschema", "sync"]] = Field(
        default_factory=list,
        description="Publish mode's controllers not to run (api-syncagent's names): apiexport, "
        "apiresourceschema, sync.",
    )
    namespace: str = Field(
        default_factory=own_namespace,
        pattern=DNS1123_LABEL,
        description="Namespace of the leader Lease and the state Secrets (default: the pod's own, in a "
        "cluster; else default).",
    )
    apiexportendpointslice_ref: str | None = Field(
        None,
        pattern=DNS1123_SUBDOMAIN,
        description="The APIExportEndpointSlice whose APIExport syncflow serves.",
    )
    published_resource_selector: str = Field(
        "", description="Label selector: serve only the PublishedResources that match it."
    )
    enable_leader_election: bool = Field(
        True, description="Run one active watcher per agent (Lease election)."
    )
    lease_duration: PositiveSeconds = Field(
        15.0, description="Leader Lease duration; standbys take over after it."
    )
    renew_deadline: PositiveSeconds = Field(
        10.0, description="A leader that cannot renew for this long steps down."
    )
    retry_period: PositiveSeconds = Field(2.0, description="How often candidates try to acquire or renew.")
    health_address: str = Field("", description="host:port serving /healthz and /readyz (empty: off).")
    metrics_address: str = Field(
        "", description="host:port serving /metrics in Prometheus' text format (empty: off)."
    )
    orphan_policy: Literal["keep", "delete"] = Field(
        "keep", description="Local copies of objects that stop matching a filter: keep them, or delete them."
    )
    allow_system_namespaces: list[Literal["kube-system", "kube-public", "kube-node-lease"]] = Field(
        default_factory=list,
        description="System namespaces copies may be written into (none by default: syncflow never writes "
        "into or deletes from kube-system, kube-public and kube-node-lease).",
    )
    resync_period: PositiveSeconds = Field(
        600.0, description="Seconds between periodic resyncs of each sync rule (with jitter)."
    )
    status_period: PositiveSeconds = Field(
        300.0, description="Seconds between re-checks of the status each rule returns (with jitter)."
    )
    upsync_period: PositiveSeconds = Field(15.0, description="Seconds between polls of each upsynced type.")

    # Workload mode; flag names follow kcp's syncer.
    sync_target_name: str | None = Field(
        None, pattern=DNS1123_SUBDOMAIN, description="The SyncTarget this syncer serves (workload mode)."
    )
    sync_target_uid: str | None = Field(
        None,
        description="The SyncTarget's UID (required in workload mode); the syncer refuses to start when it "
        "does not match.",
    )
    workspace_cluster: str | None = Field(
        None,
        description="The kcp workspace (path like root:org:ws, or logical cluster name) of the SyncTarget "
        "(workload mode) or of the Clusters (clusters mode).",
    )
    heartbeat_period: PositiveSeconds = Field(
        30.0, description="Seconds between heartbeats to the SyncTarget."
    )
    workload_resources: list[str] = Field(
        default_factory=lambda: ["v1/configmaps", "v1/secrets"],
        description="Types synced besides the SyncTarget's supportedAPIExports and the workspace's CRDs.",
    )
    namespace_clean_delay: Seconds = Field(
        30.0, description="Seconds an empty downstream namespace gone upstream is kept before deletion."
    )

    # Clusters mode.
    probe_period: PositiveSeconds = Field(10.0, description="Seconds between probes of every Cluster.")
    cluster_resources: list[str] = Field(
        default_factory=lambda: ["deployments.apps"],
        description="Types synced to Clusters: <plural>.<group>, or <plural> for the core group.",
    )
    cluster_cleanup: Literal["keep", "delete"] = Field(
        "keep", description="What a deleted Cluster's copies become: kept in the cluster, or deleted."
    )
    only_cluster: str | None = Field(
        None,
        pattern=DNS1123_SUBDOMAIN,
        description="Sync to this Cluster only, reached with --kubeconfig (a pull-mode or hand-run syncer).",
    )
    allow_link_local_servers: bool = Field(
        False,
        description="Let a Cluster's kubeconfig name a link-local or cloud metadata address (169.254.0.0/16, "
        "fe80::/10, metadata.google.internal ...) as its server or proxy-url; refused by default, since "
        "whoever writes a Cluster would make the workers request it.",
    )

    @field_validator("cluster_resources")
    @classmethod
    def _check_resources(cls, value: list[str]) -> list[str]:
        for text in value:
            if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", text):
                raise ValueError(f"resource {text!r}: want <plural>.<group> or <plural> (core group)")
        return value

    @field_validator("published_resource_selector")
    @classmethod
    def _check_selector(cls, value: str) -> str:
        LabelSelector.parse(value)  # SelectorError is a ValueError: pydantic reports it on this field
        return value

    @field_validator("health_address", "metrics_address")
    @classmethod
    def _check_address(cls, value: str) -> str:
        host, _, port = value.rpartition(":")
        if value and (not host or not port.isdigit() or not 0 <= int(port) <= 65535):
            raise ValueError(f"want host:port, got {value!r}")
        return value

    @field_validator("broker_url")
    @classmethod
    def _check_broker_url(cls, value: str | None) -> str | None:
        scheme = (value or "").partition("://")[0]
        if value is not None and scheme not in (*REDIS_SCHEMES, *AMQP_SCHEMES):
            raise ValueError(f"want redis://, rediss:// or amqp:// (RabbitMQ), got {scheme}://")
        return value

    @model_validator(mode="after")
    def _check_broker(self) -> Self:
        if self.broker_url is None and is_cluster_url(self.redis_url):
            raise ValueError(
                "a Redis Cluster cannot be Celery's broker: set broker_url (amqp:// or redis://)"
            )
        if self.broker_quorum_queues and self.broker_kind != "amqp":
            raise ValueError("broker_quorum_queues needs a RabbitMQ broker_url (amqp://)")
        return self

    @model_validator(mode="after")
    def _check_time_ordering(self) -> Self:
        if not self.task_time_limit < self.lease_ttl:
            raise ValueError(
                f"lease_ttl ({self.lease_ttl}) must be greater than task_time_limit ({self.task_time_limit})"
            )
        if not self.lease_ttl < self.visibility_timeout:
            raise ValueError(
                f"visibility_timeout ({self.visibility_timeout}) must be greater than "
                f"lease_ttl ({self.lease_ttl})"
            )
        if not self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError("need retry_period < renew_deadline < lease_duration")
        if self.backoff_base > self.backoff_cap:
            raise ValueError(f"backoff_cap ({self.backoff_cap}) must be at least backoff_base")
        return self

    @property
    def celery_broker_url(self) -> str:
        """The broker Celery uses: ``broker_url``, else ``redis_url``."""
        return self.broker_url or self.redis_url

    @property
    def broker_kind(self) -> Literal["redis", "amqp"]:
        """Which kind of broker ``celery_broker_url`` names."""
        return "amqp" if self.celery_broker_url.partition("://")[0] in AMQP_SCHEMES else "redis"

    @property
    def all_task_modules(self) -> list[str]:
        """The mode's task module (``syncflow.modes.<mode>.tasks``) and ``task_modules``."""
        return list(dict.fromkeys([f"syncflow.modes.{self.mode}.tasks", *self.task_modules]))

    @property
    def qualified_agent_name(self) -> str:
        """``<agent>.syncagent.kcp.io``: the agent as logs and the leader Lease holder name it."""
        return f"{self.agent_name}.syncagent.kcp.io"

    def endpoint_limit(self, endpoint: str) -> EndpointLimit:
        """The request budget of one endpoint (override or default)."""
        return self.endpoint_limits.get(endpoint) or EndpointLimit(
            qps=self.endpoint_qps, burst=self.endpoint_burst
        )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = _config_file.get()
        if path is None:
            return (init_settings, env_settings)
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls, yaml_file=path))


def load_settings(config_file: str | Path | None = None, **flags: Any) -> Settings:
    """Build settings from flags (``None`` values are ignored), environment and the YAML file."""
    path_text = config_file or os.environ.get("SYNCFLOW_CONFIG")
    path = Path(path_text) if path_text else None
    if path is not None and not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    token = _config_file.set(path)
    try:
        return Settings(**{name: value for name, value in flags.items() if value is not None})
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path)) from exc
    finally:
        _config_file.reset(token)


def _describe(exc: ValidationError, path: Path | None) -> str:
    lines = [f"invalid configuration{f' (file {path})' if path else ''}:"]
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "settings"
        lines.append(f"  {field}: {error['msg']}")
    return "\n".join(lines)
