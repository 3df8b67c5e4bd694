"""Checks at the start of a process, so a wrong setting fails at once with one clear line — never a
worker whose every task would fail, never a traceback or the HTTP client's retry noise."""

from __future__ import annotations

import logging
from typing import Literal

from kombu import Connection  # type: ignore[attr-defined]
from kubernetes.client.exceptions import ApiException
from redis.exceptions import RedisClusterException, RedisError

from syncflow.app import modes
from syncflow.config import ConfigError, Settings
from syncflow.kube.clients import cluster_client, kcp_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.redisclient import connect_redis
from syncflow.util.logs import log_event
from syncflow.util.neterrors import describe, display_url, network_reason

logger = logging.getLogger("syncflow.preflight")

PROBE_TIMEOUT = (3.0, 5.0)
Role = Literal["watch", "worker", "beat"]


class PreflightError(Exception):
    """A setting that cannot work; the message is the one line to show."""


def check_redis(settings: Settings) -> None:
    """Redis answers at ``--redis-url``."""
    _ping_redis(settings.redis_url, "Redis", "--redis-url")


def check_broker(settings: Settings) -> None:
    """The broker answers at ``--broker-url`` (when that is not ``--redis-url``)."""
    url = settings.celery_broker_url
    if url == settings.redis_url:
        return
    if settings.broker_kind == "redis":
        _ping_redis(url, "the broker", "--broker-url")
        return
    try:
        with Connection(url, connect_timeout=3) as connection:  # type: ignore[no-untyped-call]
            connection.ensure_connection(max_retries=0)  # connect() retries once, 2 s later
    except Exception as exc:  # refused, unreachable, bad credentials: all the same one line
        raise PreflightError(
            f"cannot reach the broker at {display_url(url)}: {network_reason(exc)}"
        ) from None


def _ping_redis(url: str, what: str, flag: str) -> None:
    try:
        # A Redis Cluster client asks its nodes when it is made; a single Redis answers the PING.
        with connect_redis(url, socket_connect_timeout=3, socket_timeout=3) as client:
            client.ping()
    except ValueError as exc:
        raise PreflightError(f"{flag} {display_url(url)}: {exc}") from None
    except (RedisError, RedisClusterException, OSError) as exc:
        raise PreflightError(f"cannot reach {what} at {display_url(url)}: {network_reason(exc)}") from None


def _probe(api: JsonApi, what: str, flag: str) -> None:
    try:
        api.request("GET", "/version")
    except ApiException as exc:
        if exc.status in (401, 403):
            raise PreflightError(
                f"{what} at {api.host} refuses the credentials of {flag}: {describe(exc)}"
            ) from None
    except Exception as exc:  # every way of not answering is the same one line
        raise PreflightError(f"cannot reach {what} at {api.host} ({flag}): {network_reason(exc)}") from None


def check_endpoints(settings: Settings) -> None:
    """Both kubeconfigs load and their API servers answer (one line for the first that does not); only
    kcp's for a mode that runs next to no one cluster."""
    try:
        cluster = cluster_client(settings) if modes.next_to_cluster(settings) else None
        kcp = kcp_client(settings)
    except ValueError as exc:  # KubeconfigError and ConfigError name the flag
        raise PreflightError(str(exc)) from None
    if cluster is not None:
        _probe(JsonApi(cluster, timeout=PROBE_TIMEOUT), "the cluster", "--kubeconfig")
    _probe(JsonApi(kcp, timeout=PROBE_TIMEOUT), "kcp", "--kcp-kubeconfig")


def warn_without_watcher(settings: Settings) -> None:
    """A worker whose agent name no watcher uses gets no work: say so (a warning: it may start first)."""
    lease = f"syncagent.{settings.agent_name}"
    path = f"/apis/coordination.k8s.io/v1/namespaces/{settings.namespace}/leases/{lease}"
    try:
        JsonApi(cluster_client(settings), timeout=PROBE_TIMEOUT).get(path)
    except ApiException as exc:
        if exc.status == 404:
            log_event(
                logger,
                "preflight.no_watcher",
                level=logging.WARNING,
                lease=f"{settings.namespace}/{lease}",
                hint="no watcher of this agent has run yet: check --agent-name and --namespace",
            )
    except Exception:  # reachability was checked already; this is only a hint
        return


def check(settings: Settings, role: Role) -> None:
    """Everything ``role`` needs; raises :class:`PreflightError`. Nothing when ``preflight`` is off."""
    if not settings.preflight:
        return
    check_redis(settings)
    check_broker(settings)
    if role == "beat":
        return
    if settings.mode == "publish" and not settings.apiexportendpointslice_ref:
        raise PreflightError("--apiexportendpointslice-ref is required in publish mode")
    try:
        check_endpoints(settings)
    except ConfigError as exc:
        raise PreflightError(str(exc)) from None
    modes.preflight(settings)
    if role == "worker" and settings.enable_leader_election and modes.next_to_cluster(settings):
        warn_without_watcher(settings)
