"""The syncer's account in its kcp workspace: a ServiceAccount, a ClusterRole with what the syncer may
do there, their binding, and the account's token — what kcp's and KubeStellar's bootstraps create.

Every object is created, or updated to what is wanted when it exists (so running a bootstrap again
changes the rights and keeps the account). The token comes from a ``kubernetes.io/service-account-token``
Secret (long-lived, kcp's way); where no token controller fills it, from the TokenRequest API.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.bootstrap.errors import BootstrapError, explained
from syncflow.kube.jsonapi import JsonApi

Obj = dict[str, Any]
RBAC = "/apis/rbac.authorization.k8s.io/v1"
TOKEN_TYPE = "kubernetes.io/service-account-token"
ACCOUNT_ANNOTATION = "kubernetes.io/service-account.name"
TOKEN_WAIT = 5.0
"""Seconds to wait for the token controller to fill the token Secret."""
TOKEN_LIFETIME = 87600 * 3600
"""A TokenRequest's lifetime (KubeStellar's default: 10 years), when no token Secret is filled."""


@dataclass(frozen=True)
class Account:
    """A ServiceAccount of the workspace and the cluster-wide rules it is granted."""

    name: str
    namespace: str
    rules: list[Obj]
    owner: Obj | None = None
    """An ownerReference (the SyncTarget, the EdgeSyncConfig): deleting it removes the account."""
    labels: dict[str, str] = field(default_factory=dict)

    def metadata(self, name: str, namespace: str | None = None) -> Obj:
        """Metadata of one of the account's objects."""
        meta: Obj = {"name": name}
        if namespace:
            meta["namespace"] = namespace
        if self.labels:
            meta["labels"] = dict(self.labels)
        if self.owner:
            meta["ownerReferences"] = [self.owner]
        return meta


def _owners(current: list[Obj] | None, wanted: list[Obj]) -> list[Obj]:
    merged = list(current or [])
    return merged + [o for o in wanted if all(c.get("uid") != o.get("uid") for c in merged)]


def apply(api: JsonApi, collection: str, body: Obj, echo: Callable[[str], None]) -> Obj:
    """Create ``body`` in ``collection``, or merge-patch the existing one to it: its fields replaced, labels,
    annotations and owners added to (none removed)."""
    kind = body["kind"].lower()
    name = body["metadata"]["name"]
    with explained("creating", f"{kind} {name}", api.host):
        try:
            created = api.create(collection, body)
            echo(f"{kind}/{name} created")
            return created
        except ApiException as exc:
            if exc.status != 409:
                raise
    with explained("updating", f"{kind} {name}", api.host):
        current = api.get(f"{collection}/{name}")
        patch = {k: v for k, v in body.items() if k not in ("apiVersion", "kind", "metadata")}
        meta = body["metadata"]
        patch["metadata"] = {"resourceVersion": current["metadata"]["resourceVersion"]}
        for key in ("labels", "annotations"):
            if meta.get(key):
                patch["metadata"][key] = meta[key]
        if meta.get("ownerReferences"):
            patch["metadata"]["ownerReferences"] = _owners(
                current["metadata"].get("ownerReferences"), meta["ownerReferences"]
            )
        updated = api.merge_patch(f"{collection}/{name}", patch)
    same = updated["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    echo(f"{kind}/{name} {'unchanged' if same else 'configured'}")
    return updated


def ensure(api: JsonApi, account: Account, echo: Callable[[str], None]) -> str:
    """Create or update the account, its ClusterRole and binding; return its token."""
    apply(
        api,
        f"/api/v1/namespaces/{account.namespace}/serviceaccounts",
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": account.metadata(account.name, account.namespace),
        },
        echo,
    )
    apply(
        api,
        f"{RBAC}/clusterroles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": account.metadata(account.name),
            "rules": account.rules,
        },
        echo,
    )
    apply(
        api,
        f"{RBAC}/clusterrolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": account.metadata(account.name),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": account.name},
            "subjects": [{"kind": "ServiceAccount", "name": account.name, "namespace": account.namespace}],
        },
        echo,
    )
    return token(api, account, echo)


def token(api: JsonApi, account: Account, echo: Callable[[str], None]) -> str:
    """The account's token: from its token Secret, else (no token controller) a TokenRequest."""
    secrets = f"/api/v1/namespaces/{account.namespace}/secrets"
    name = f"{account.name}-token"
    meta = account.metadata(name, account.namespace)
    meta["annotations"] = {ACCOUNT_ANNOTATION: account.name}
    apply(api, secrets, {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": TOKEN_TYPE}, echo)
    deadline = time.monotonic() + TOKEN_WAIT
    with explained("reading", f"secret {name}", api.host):
        while True:
            encoded = (api.get(f"{secrets}/{name}").get("data") or {}).get("token")
            if encoded:
                return base64.b64decode(encoded).decode()
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
    with explained("requesting a token for", f"serviceaccount {account.name}", api.host):
        api.delete(f"{secrets}/{name}")
        issued = api.create(
            f"/api/v1/namespaces/{account.namespace}/serviceaccounts/{account.name}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": TOKEN_LIFETIME},
            },
        )
    status = issued.get("status") or {}
    if not status.get("token"):
        raise BootstrapError(f"the server issued no token for serviceaccount {account.name}")
    echo(
        f"no token controller filled secret/{name}: using a requested token that expires at "
        f"{status.get('expirationTimestamp', 'an unknown time')}"
    )
    return str(status["token"])
