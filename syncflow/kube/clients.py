"""API clients per endpoint: one per kubeconfig, and copies retargeted at a kcp cluster or URL."""

from __future__ import annotations

import copy
import os
import re

import urllib3
from kubernetes import client, config

from syncflow.config import Settings

_CLUSTER_SUFFIX = re.compile(r"/clusters/[^/]+/?$")

RETRIES = urllib3.Retry(total=2, read=1, respect_retry_after_header=False)
"""urllib3's retries of one request: a stale pooled connection is retried, but a read that timed out
only once (the default, 3 retries of any error, would make a hung GET take four read timeouts). A
throttled answer (429 with ``Retry-After``) is not waited for and resent here, past the task's
deadline: it is a transient error, which the queue backs off."""


class KubeconfigError(ValueError):
    """A kubeconfig that is missing or cannot be used; the message names the file."""


def load_client(kubeconfig: str | None, context: str | None = None, *, flag: str = "") -> client.ApiClient:
    """A new ApiClient for ``kubeconfig`` (in-cluster or the default file when None); errors name ``flag``.

    Never reads or changes the client library's global default configuration.
    """
    try:
        return _load(kubeconfig, context)
    except KubeconfigError as exc:
        raise KubeconfigError(f"{flag}: {exc}" if flag else str(exc)) from exc.__cause__


def _load(kubeconfig: str | None, context: str | None) -> client.ApiClient:
    configuration = type.__call__(client.Configuration)
    configuration.retries = RETRIES
    if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except config.ConfigException as exc:
            raise KubeconfigError(f"in-cluster configuration: {exc}") from exc
        return client.ApiClient(configuration=configuration)
    path = os.path.expanduser(kubeconfig or config.KUBE_CONFIG_DEFAULT_LOCATION)
    if not os.path.isfile(path):
        raise KubeconfigError(f"stat {path}: no such file or directory")
    try:
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=path, context=context, client_configuration=configuration, persist_config=False
        )
    except Exception as exc:  # the loader raises ConfigException, YAML, type and key errors alike
        raise KubeconfigError(f"invalid configuration in {path}: {exc}") from exc
    return client.ApiClient(configuration=configuration)


def for_url(api: client.ApiClient, url: str) -> client.ApiClient:
    """A new client for ``url`` with the same credentials, CA and headers as ``api``."""
    configuration = copy.deepcopy(api.configuration)
    configuration.host = url.rstrip("/")
    reload_token = configuration.refresh_api_key_hook
    if reload_token is not None:
        # The kubeconfig loader's hook (set for token credentials) re-applies the whole kubeconfig,
        # its server and the hook itself too, before every request: keep its token, not its server.
        def refresh(config: client.Configuration) -> None:
            reload_token(config)
            config.host = url.rstrip("/")
            config.refresh_api_key_hook = refresh  # type: ignore[assignment]  # typed as None

        configuration.refresh_api_key_hook = refresh
    copied = client.ApiClient(configuration=configuration)
    copied.default_headers.update(api.default_headers)
    return copied


def for_cluster(api: client.ApiClient, cluster: str) -> client.ApiClient:
    """A client for kcp logical cluster ``cluster`` (a name, a ``root:a:b`` path or ``*``).

    Replaces the ``/clusters/<x>`` suffix of the host, or appends one.
    """
    if not cluster or "/" in cluster:
        raise ValueError(f"not a logical cluster name or path: {cluster!r}")
    base = _CLUSTER_SUFFIX.sub("", api.configuration.host.rstrip("/"))
    return for_url(api, f"{base}/clusters/{cluster}")


def _override(api: client.ApiClient, host: str | None, ca_file: str | None, flag: str) -> client.ApiClient:
    if ca_file is not None and not os.path.isfile(ca_file):
        raise KubeconfigError(f"{flag}: stat {ca_file}: no such file or directory")
    if host:
        api.configuration.host = host.rstrip("/")
    if ca_file:
        api.configuration.ssl_ca_cert = ca_file
    return api


def cluster_client(settings: Settings) -> client.ApiClient:
    """The client of the cluster syncflow runs next to (``--kubeconfig``, its overrides; in-cluster or
    ~/.kube/config when unset)."""
    api = load_client(settings.kubeconfig, flag="--kubeconfig")
    return _override(
        api,
        settings.kubeconfig_host_override,
        settings.kubeconfig_ca_file_override,
        "--kubeconfig-ca-file-override",
    )


def kcp_client(settings: Settings) -> client.ApiClient:
    """The kcp client (``--kcp-kubeconfig``, its overrides): required, never a default kubeconfig, which
    could make syncflow take the service cluster for kcp."""
    if not settings.kcp_kubeconfig:
        raise KubeconfigError("--kcp-kubeconfig is required (SYNCFLOW_KCP_KUBECONFIG): the kubeconfig of kcp")
    api = load_client(settings.kcp_kubeconfig, flag="--kcp-kubeconfig")
    return _override(api, settings.kcp_host_override, settings.kcp_ca_file_override, "--kcp-ca-file-override")
