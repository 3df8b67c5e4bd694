"""Kubeconfig files that point kubectl and client libraries at a devcluster."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from syncflow.kube import kubeconfigs


def kubeconfig(
    contexts: dict[str, str], token: str | None, current: str, ca_pem: bytes | None = None
) -> dict[str, Any]:
    """A kubeconfig with one cluster+context per (context name -> server URL), all with one user."""
    user: dict[str, Any] = {"token": token} if token else {}
    cluster: dict[str, Any] = {}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url, **cluster}} for name, url in contexts.items()],
        "users": [{"name": "devcluster", "user": user}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": "devcluster", "namespace": "default"}}
            for name in contexts
        ],
        "current-context": current,
        "preferences": {},
    }


def write_kubeconfig(path: Path, config: dict[str, Any]) -> None:
    """Write ``config`` atomically, readable only by the owner (it may hold a token)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(kubeconfigs.dump(config))
    tmp.replace(path)
