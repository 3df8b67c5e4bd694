"""Just enough authorisation to tell an agent from an admin.

The identity ``admin`` may do everything. Any other identity is allowed what the RBAC objects of
the addressed workspace grant it as a ``User`` subject: ClusterRoleBindings (and RoleBindings of
the request's namespace) pointing at ClusterRoles or Roles whose rules match the verb, API group,
resource (``resource/subresource``) and resource name, with ``*`` wildcards. Aggregated roles,
groups other than ``system:authenticated``, non-resource URLs and impersonation are not evaluated.
"""

from __future__ import annotations

from typing import Any

from syncflow.devcluster.store import Obj, Store

ADMIN = "admin"
RBAC = "rbac.authorization.k8s.io"


def _names_subject(binding: Obj, user: str) -> bool:
    for subject in binding.get("subjects") or []:
        if subject.get("kind") == "User" and subject.get("name") == user:
            return True
        if subject.get("kind") == "Group" and subject.get("name") == "system:authenticated":
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


def allowed(
    store: Store,
    cluster: str,
    user: str,
    verb: str,
    group: str,
    resource: str,
    name: str = "",
    namespace: str | None = None,
) -> bool:
    """Whether ``user`` may ``verb`` the resource in ``cluster``."""
    if user == ADMIN:
        return True
    bindings = [b for _, b in store.items(cluster, RBAC, "clusterrolebindings")]
    if namespace:
        bindings += [b for _, b in store.items(cluster, RBAC, "rolebindings", namespace)]
    for binding in bindings:
        if not _names_subject(binding, user):
            continue
        ref = binding.get("roleRef") or {}
        role_namespace = "" if ref.get("kind") == "ClusterRole" else binding["metadata"].get("namespace", "")
        plural = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
        role = store.get(cluster, RBAC, plural, role_namespace, ref.get("name", ""))
        if role and any(_rule_allows(r, verb, group, resource, name) for r in role.get("rules") or []):
            return True
    return False
