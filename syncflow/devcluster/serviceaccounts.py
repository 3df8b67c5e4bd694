"""ServiceAccounts as kube-controller-manager and kube-apiserver keep them.

- Every namespace gets a ``default`` ServiceAccount when it is created (also the initial ones, and
  in every kcp workspace); deleting it from a namespace that is not terminating creates it again.
- ``POST …/serviceaccounts/<name>/token`` (``authentication.k8s.io/v1 TokenRequest``) mints a
  bound token: ``spec.expirationSeconds`` (default 3600, at least 600) sets its expiry.
- A Secret of type ``kubernetes.io/service-account-token`` naming an existing ServiceAccount in the
  ``kubernetes.io/service-account.name`` annotation gets ``data.token``, ``data.ca.crt`` and
  ``data.namespace`` (and the ``kubernetes.io/service-account.uid`` annotation) when it is written.
- A bearer token minted here authenticates as ``system:serviceaccount:<ns>:<name>`` while its
  ServiceAccount (and Secret) exist with the same UIDs and it has not expired.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from syncflow.devcluster import errors
from syncflow.devcluster.crud import Objects, Target, now_rfc3339
from syncflow.devcluster.errors import FieldError
from syncflow.devcluster.rbac import Identity, service_account_identity
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.store import Obj
from syncflow.devcluster.tokens import DEFAULT_AUDIENCES, TokenExpiredError, TokenIssuer, TokenSubject

DEFAULT_ACCOUNT = "default"
TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token"
NAME_ANNOTATION = "kubernetes.io/service-account.name"
UID_ANNOTATION = "kubernetes.io/service-account.uid"
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 2**32
_AUTHENTICATION = "authentication.k8s.io"


def _is(t: Target, plural: str) -> bool:
    return (t.rtype.group, t.rtype.plural) == ("", plural)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class ServiceAccounts:
    """Default accounts, token Secrets, the TokenRequest API and token authentication."""

    def __init__(self, objects: Objects, registry: Registry, ca_pem: Callable[[], str]) -> None:
        self.objects = objects
        self.registry = registry
        self.ca_pem = ca_pem
        self.issuer = TokenIssuer()
        objects.admission.append(self._admit)
        objects.on_write.append(self._after_write)
        objects.on_remove.append(self._after_remove)

    def _target(self, cluster: str) -> Target:
        rtype = self.registry.by_group_resource(cluster, "", "serviceaccounts")
        assert rtype is not None
        return Target(cluster, rtype, "v1")

    def _account(self, cluster: str, namespace: str, name: str) -> Obj | None:
        return self.objects.store.get(cluster, "", "serviceaccounts", namespace, name)

    def _ensure_default(self, cluster: str, namespace: str) -> None:
        if self._account(cluster, namespace, DEFAULT_ACCOUNT) is None:
            self.objects.create(self._target(cluster), namespace, {"metadata": {"name": DEFAULT_ACCOUNT}})

    # ----- hooks -----

    def _after_write(self, t: Target, new: Obj, old: Obj | None) -> None:
        if _is(t, "namespaces") and old is None and not new["metadata"].get("deletionTimestamp"):
            self._ensure_default(t.cluster, new["metadata"]["name"])

    def _after_remove(self, t: Target, obj: Obj) -> None:
        meta = obj["metadata"]
        if not _is(t, "serviceaccounts") or meta["name"] != DEFAULT_ACCOUNT:
            return
        namespace = self.objects.store.get(t.cluster, "", "namespaces", "", meta["namespace"])
        if namespace is not None and not namespace["metadata"].get("deletionTimestamp"):
            self._ensure_default(t.cluster, meta["namespace"])

    def _admit(self, t: Target, new: Obj, old: Obj | None) -> None:
        if not _is(t, "secrets") or new.get("type") != TOKEN_SECRET_TYPE:
            return
        meta = new["metadata"]
        annotations = meta.get("annotations") or {}
        account_name = annotations.get(NAME_ANNOTATION)
        if not account_name:
            raise errors.invalid(
                "Secret",
                meta.get("name", ""),
                [
                    FieldError(
                        f"metadata.annotations[{NAME_ANNOTATION}]", "FieldValueRequired", "Required value"
                    )
                ],
            )
        account = self._account(t.cluster, meta.get("namespace", ""), account_name)
        data = new.get("data") or {}
        if account is None or data.get("token"):
            return
        subject = TokenSubject(
            t.cluster, meta["namespace"], account_name, account["metadata"]["uid"], meta["name"], meta["uid"]
        )
        meta["annotations"] = {**annotations, UID_ANNOTATION: account["metadata"]["uid"]}
        new["data"] = {
            **data,
            "token": _b64(self.issuer.mint_legacy(subject)),
            "ca.crt": _b64(self.ca_pem()),
            "namespace": _b64(meta["namespace"]),
        }

    # ----- TokenRequest -----

    def token_request(self, cluster: str, namespace: str, name: str, body: Any) -> Obj:
        """Serve ``POST serviceaccounts/<name>/token``: mint a bound token."""
        account = self._account(cluster, namespace, name)
        if account is None:
            raise errors.not_found("serviceaccounts", name)
        spec = body.get("spec") if isinstance(body, dict) else None
        spec = spec if isinstance(spec, dict) else {}
        seconds = spec.get("expirationSeconds") or DEFAULT_EXPIRATION
        problems = []
        if not isinstance(seconds, int) or seconds < MIN_EXPIRATION:
            problems.append("may not specify a duration less than 10 minutes")
        elif seconds > MAX_EXPIRATION:
            problems.append("may not specify a duration larger than 2^32 seconds")
        if problems:
            raise errors.invalid(
                "TokenRequest",
                name,
                [
                    FieldError(
                        "spec.expirationSeconds",
                        "FieldValueInvalid",
                        f"Invalid value: {seconds}: {problems[0]}",
                    )
                ],
                _AUTHENTICATION,
            )
        audiences = tuple(spec.get("audiences") or DEFAULT_AUDIENCES)
        subject = TokenSubject(cluster, namespace, name, account["metadata"]["uid"])
        token, expires = self.issuer.mint(subject, seconds, audiences)
        return {
            "kind": "TokenRequest",
            "apiVersion": f"{_AUTHENTICATION}/v1",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": now_rfc3339()},
            "spec": {
                "audiences": list(audiences),
                "expirationSeconds": seconds,
                "boundObjectRef": spec.get("boundObjectRef"),
            },
            "status": {"token": token, "expirationTimestamp": _rfc3339(expires)},
        }

    # ----- authentication -----

    def authenticate(self, token: str) -> Identity | None:
        """The identity of a ServiceAccount token minted here; None if the token is not one of ours.

        An expired token, or one whose ServiceAccount or Secret is gone, is answered 401.
        """
        try:
            subject = self.issuer.verify(token)
        except TokenExpiredError:
            raise errors.unauthorized() from None
        if subject is None:
            return None
        account = self._account(subject.cluster, subject.namespace, subject.name)
        if account is None or account["metadata"]["uid"] != subject.uid:
            raise errors.unauthorized()
        if subject.secret_name:
            secret = self.objects.store.get(
                subject.cluster, "", "secrets", subject.namespace, subject.secret_name
            )
            if secret is None or secret["metadata"]["uid"] != subject.secret_uid:
                raise errors.unauthorized()
        return service_account_identity(subject.cluster, subject.namespace, subject.name)


def _rfc3339(unix_seconds: int) -> str:
    return datetime.fromtimestamp(unix_seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
