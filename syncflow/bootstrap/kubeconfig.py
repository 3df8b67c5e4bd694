"""The kubeconfig a bootstrapped syncer uses to reach its kcp workspace: the operator's server and CA,
the syncer's own token."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes.client import ApiClient

from syncflow.kube.clients import for_cluster


@dataclass(frozen=True)
class Server:
    """Where a kcp workspace is served and how to trust it."""

    url: str
    """The workspace URL (``<kcp>/clusters/<path>``)."""
    ca_data: str | None = None
    """The CA bundle, base64 of PEM (None: the system's trust store, or plain HTTP)."""
    insecure: bool = False
    """The operator's kubeconfig skips TLS verification (copied, never introduced)."""

    @classmethod
    def of_workspace(cls, kcp: ApiClient, path: str) -> Server:
        """The server of workspace ``path`` as the operator's client reaches it."""
        configuration = kcp.configuration
        ca_file = configuration.ssl_ca_cert
        ca_data = base64.b64encode(Path(ca_file).read_bytes()).decode() if ca_file else None
        return cls(for_cluster(kcp, path).configuration.host, ca_data, not configuration.verify_ssl)


def kubeconfig(server: Server, token: str, namespace: str) -> str:
    """A kubeconfig (YAML) with one context: ``server`` as the bearer of ``token``, in ``namespace``."""
    cluster: dict[str, Any] = {"server": server.url}
    if server.ca_data:
        cluster["certificate-authority-data"] = server.ca_data
    if server.insecure:
        cluster["insecure-skip-tls-verify"] = True
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kcp", "cluster": cluster}],
        "contexts": [
            {"name": "kcp", "context": {"cluster": "kcp", "namespace": namespace, "user": "syncer"}}
        ],
        "current-context": "kcp",
        "users": [{"name": "syncer", "user": {"token": token}}],
    }
    return yaml.safe_dump(config, sort_keys=False)
