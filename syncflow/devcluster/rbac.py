"""Identities and just enough RBAC to hold them to what they were granted.

An :class:`Identity` is who a bearer token names: ``admin`` (may do everything), another static
``--token`` identity, or a ServiceAccount (``system:serviceaccount:<ns>:<name>``, minted by the
server, valid only in the logical cluster that minted it). Any identity held to RBAC is allowed what
the RBAC objects of the addressed logical cluster grant it: ClusterRoleBindings (and RoleBindings of
the request's namespace) whose subjects name its user, one of its groups, or its ServiceAccount,
pointing at ClusterRoles or Roles whose rules match the verb, API group, resource
(``resource/subresource``) and resource name, with ``*`` wildcards. Aggregated roles, non-resource
URLs and impersonation are not evaluated.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from syncflow.devcluster.store import Obj, Store

ADMIN = "admin"
RBAC = "rbac.authorization.k8s.io"
AUTHENTICATED = "system:authenticated"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class Identity:
    """Who a request is: user name, groups, and for ServiceAccounts the cluster that minted the token."""

    user: str
    groups: tuple[str, ...] = (AUTHENTICATED,)
    cluster: str | None = None

    @property
    def is_admin(self) -> bool:
        """The identity that may do everything."""
        return self.user == ADMIN

    @property
    def service_account(self) -> tuple[str, str] | None:
        """(namespace, name) of a ServiceAccount identity."""
        if not self.user.startswith(SERVICE_ACCOUNT_PREFIX):
            return None
        namespace, _, name = self.user.removeprefix(SERVICE_ACCOUNT_PREFIX).partition(":")
        return namespace, name


def service_account_identity(cluster: str, namespace: str, name: str) -> Identity:
    """The identity of a ServiceAccount token minted in ``cluster``, with kube's groups."""
    return Identity(
        f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
        cluster,
    )


def _names_subject(binding: Obj, identity: Identity) -> bool:
    account = identity.service_account
    for subject in binding.get("subjects") or []:
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "User" and name == identity.user:
            return True
        if kind == "Group" and name in identity.groups:
            return True
        if kind == "ServiceAccount" and account is not None:
            namespace = subject.get("namespace") or binding["metadata"].get("namespace", "")
            if (namespace, name) == account:
                return True
    return False


def _matches(values: list[str] | None, wanted: str) -> bool:
    return bool(values) and ("*" in values or wanted in values)  # type: ignore[operator]


def _rule_allows(rule: dict[str, Any], verb: str, group: str, resource: str, name: str) -> bool:
    names = rule.get("resourceNames") or []
    return (
        _matches(rule.get("verbs"), verb)
        and _matches(rule.get("apiGroups"), group)
        and _matches(rule.get("resources"), resource)
        and (not names or name in names)
    )


def rules(store: Store, cluster: str, identity: Identity, namespace: str | None = None) -> Iterator[Obj]:
    """The RBAC rules granted to ``identity`` in ``cluster`` (and ``namespace``'s RoleBindings)."""
    bindings = [b for _, b in store.items(cluster, RBAC, "clusterrolebindings")]
    if namespace:
        bindings += [b for _, b in store.items(cluster, RBAC, "rolebindings", namespace)]
    for binding in bindings:
        if not _names_subject(binding, identity):
            continue
        ref = binding.get("roleRef") or {}
        role_namespace = "" if ref.get("kind") == "ClusterRole" else binding["metadata"].get("namespace", "")
        plural = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
        role = store.get(cluster, RBAC, plural, role_namespace, ref.get("name", ""))
        yield from (role or {}).get("rules") or []


def allowed(
    store: Store,
    cluster: str,
    identity: Identity,
    verb: str,
    group: str,
    resource: str,
    name: str = "",
    namespace: str | None = None,
) -> bool:
    """Whether ``identity`` may ``verb`` the resource in ``cluster``."""
    if identity.is_admin:
        return True
    if identity.cluster is not None and identity.cluster != cluster:
        return False  # a ServiceAccount token is valid only where it was minted
    return any(
        _rule_allows(r, verb, group, resource, name) for r in rules(store, cluster, identity, namespace)
    )


ADMIN_IDENTITY = Identity(ADMIN, (AUTHENTICATED, "system:masters"))


def forbidden_message(
    identity: Identity, verb: str, group: str, resource: str, name: str, namespace: str | None
) -> str:
    """kube-apiserver's wording of an RBAC denial (``resource`` may be ``plural/subresource``)."""
    plural = resource.split("/", maxsplit=1)[0]
    subject = f"{plural}.{group}" if group else plural
    if name:
        subject += f' "{name}"'
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return (
        f'{subject} is forbidden: User "{identity.user}" cannot {verb} resource "{resource}" '
        f'in API group "{group}" {where}'
    )
