"""The create-only review resources of authentication.k8s.io and authorization.k8s.io.

Nothing is stored: a create answers the sent object with its ``status`` filled in, as
kube-apiserver does. Access reviews are answered from devcluster's own authorisation (the
request's view: RBAC for identities held to it, everything for the others; see
:mod:`syncflow.devcluster.rbac`); token reviews from the tokens the server accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from syncflow.devcluster import errors, rbac
from syncflow.devcluster.rbac import Identity
from syncflow.devcluster.resources import ResourceType
from syncflow.devcluster.views import View

Obj = dict[str, Any]
AUTHENTICATION = "authentication.k8s.io"
AUTHORIZATION = "authorization.k8s.io"
_ALL_RULES = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]


def is_review(rtype: ResourceType) -> bool:
    """Whether ``rtype`` is a review: created and answered, never stored."""
    return rtype.group in (AUTHENTICATION, AUTHORIZATION) and rtype.verbs == ("create",)


def open_to_everyone(rtype: ResourceType) -> bool:
    """Self reviews, which kube's default ``system:basic-user`` role grants every authenticated user."""
    return is_review(rtype) and rtype.plural.startswith("self")


def _user_info(identity: Identity) -> Obj:
    return {"username": identity.user, "groups": list(identity.groups)}


def _attributes_allowed(spec: Obj, allows: Callable[[str, str, str, str, str | None], bool]) -> bool:
    attributes = spec.get("resourceAttributes")
    if not isinstance(attributes, dict):  # non-resource URLs: only identities not held to RBAC
        return allows("get", "", "", "", None) if spec.get("nonResourceAttributes") else False
    resource = attributes.get("resource", "")
    if attributes.get("subresource"):
        resource += "/" + attributes["subresource"]
    return allows(
        attributes.get("verb", ""),
        attributes.get("group", ""),
        resource,
        attributes.get("name", ""),
        attributes.get("namespace") or None,
    )


def _named_identity_allows(
    view: View, identity: Identity
) -> Callable[[str, str, str, str, str | None], bool]:
    def allows(verb: str, group: str, resource: str, name: str, namespace: str | None) -> bool:
        if "system:masters" in identity.groups or view.store is None or view.cluster is None:
            return "system:masters" in identity.groups
        return rbac.allowed(view.store, view.cluster, identity, verb, group, resource, name, namespace)

    return allows


def answer(
    view: View,
    rtype: ResourceType,
    api_version: str,
    namespace: str,
    body: Obj,
    identify: Callable[[str], Identity | None],
) -> Obj:
    """The review ``body`` with its status, as the create returns it."""
    spec = body.get("spec") or {}
    if not isinstance(spec, dict):
        raise errors.bad_request(f"{rtype.kind}.spec must be an object")
    status: Obj
    if rtype.plural == "selfsubjectreviews":
        status = {"userInfo": _user_info(view.identity)}
    elif rtype.plural == "tokenreviews":
        identity = identify(str(spec.get("token") or ""))
        status = (
            {"authenticated": True, "user": _user_info(identity)} if identity else {"authenticated": False}
        )
        status["audiences"] = spec.get("audiences") or []
    elif rtype.plural == "selfsubjectaccessreviews":
        status = {"allowed": _attributes_allowed(spec, view.allows)}
    elif rtype.plural == "selfsubjectrulesreviews":
        status = {"resourceRules": _rules(view, spec.get("namespace") or None), "incomplete": False}
        status["nonResourceRules"] = []
    else:  # subjectaccessreviews, localsubjectaccessreviews: about another user
        if rtype.namespaced:  # a LocalSubjectAccessReview is about its own namespace
            attributes = {**(spec.get("resourceAttributes") or {}), "namespace": namespace}
            spec = {**spec, "resourceAttributes": attributes}
        subject = Identity(str(spec.get("user") or ""), tuple(spec.get("groups") or ()))
        status = {"allowed": _attributes_allowed(spec, _named_identity_allows(view, subject))}
    metadata = {"namespace": namespace} if rtype.namespaced else {}
    return {
        "kind": rtype.kind,
        "apiVersion": api_version,
        "metadata": {**metadata, "creationTimestamp": None},
        "spec": spec,
        "status": status,
    }


def _rules(view: View, namespace: str | None) -> list[Obj]:
    if view.store is None or view.cluster is None or not view.held_to_rbac():
        return _ALL_RULES
    return [
        {k: rule[k] for k in ("verbs", "apiGroups", "resources", "resourceNames") if k in rule}
        for rule in rbac.rules(view.store, view.cluster, view.identity, namespace)
    ]
