"""ServiceAccount tokens: JWTs the server signs (HS256, a random key per server run) and checks.

Two kinds, shaped like kube's: bound tokens from the TokenRequest API (``serviceaccounts/<name>/token``)
with an expiry and the ``kubernetes.io`` claim; and legacy tokens written into
``kubernetes.io/service-account-token`` Secrets, without expiry, naming the Secret. A token names the
logical cluster that minted it (``kcp.io/cluster``; empty on a plain server). Whether the
ServiceAccount (and Secret) still exist is checked by the caller, against the store.
"""

from __future__ import annotations

import secrets
import time
import uuid
from dataclasses import dataclass

import jwt

ISSUER = "https://kubernetes.default.svc.cluster.local"
LEGACY_ISSUER = "kubernetes/serviceaccount"
DEFAULT_AUDIENCES = (ISSUER,)
_CLUSTER_CLAIM = "kcp.io/cluster"
_LEGACY = "kubernetes.io/serviceaccount/"


class TokenExpiredError(Exception):
    """A token of this server whose expiry has passed."""


@dataclass(frozen=True)
class TokenSubject:
    """Whom a verified token names."""

    cluster: str
    namespace: str
    name: str
    uid: str
    secret_name: str = ""
    secret_uid: str = ""


class TokenIssuer:
    """Mints and verifies the tokens of one server."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def mint(
        self,
        subject: TokenSubject,
        expiration_seconds: int,
        audiences: tuple[str, ...] = DEFAULT_AUDIENCES,
        now: float | None = None,
    ) -> tuple[str, int]:
        """A bound token (TokenRequest) and its expiry (Unix seconds)."""
        issued = int(time.time() if now is None else now)
        expires = issued + expiration_seconds
        claims = {
            "iss": ISSUER,
            "sub": f"system:serviceaccount:{subject.namespace}:{subject.name}",
            "aud": list(audiences),
            "iat": issued,
            "nbf": issued,
            "exp": expires,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": {
                "namespace": subject.namespace,
                "serviceaccount": {"name": subject.name, "uid": subject.uid},
            },
            _CLUSTER_CLAIM: subject.cluster,
        }
        return jwt.encode(claims, self._key, algorithm="HS256"), expires

    def mint_legacy(self, subject: TokenSubject) -> str:
        """A token for a ``kubernetes.io/service-account-token`` Secret (no expiry)."""
        claims = {
            "iss": LEGACY_ISSUER,
            "sub": f"system:serviceaccount:{subject.namespace}:{subject.name}",
            f"{_LEGACY}namespace": subject.namespace,
            f"{_LEGACY}secret.name": subject.secret_name,
            f"{_LEGACY}service-account.name": subject.name,
            f"{_LEGACY}service-account.uid": subject.uid,
            _CLUSTER_CLAIM: subject.cluster,
            "kcp.io/secret-uid": subject.secret_uid,
        }
        return jwt.encode(claims, self._key, algorithm="HS256")

    def verify(self, token: str, now: float | None = None) -> TokenSubject | None:
        """The subject of a valid token of this server, None for a token that is not one of its own.

        Raises :class:`TokenExpiredError` for one of its own tokens that has expired.
        """
        if token.count(".") != 2:
            return None
        try:
            claims = jwt.decode(
                token,
                self._key,
                algorithms=["HS256"],
                options={"verify_aud": False, "verify_exp": False, "verify_nbf": False},
            )
        except jwt.InvalidTokenError:
            return None
        if "exp" in claims and float(claims["exp"]) <= (time.time() if now is None else now):
            raise TokenExpiredError(f"token expired at {int(claims['exp'])}")
        cluster = str(claims.get(_CLUSTER_CLAIM, ""))
        if claims.get("iss") == LEGACY_ISSUER:
            return TokenSubject(
                cluster,
                str(claims[f"{_LEGACY}namespace"]),
                str(claims[f"{_LEGACY}service-account.name"]),
                str(claims[f"{_LEGACY}service-account.uid"]),
                str(claims[f"{_LEGACY}secret.name"]),
                str(claims.get("kcp.io/secret-uid", "")),
            )
        account = claims["kubernetes.io"]
        return TokenSubject(
            cluster,
            str(account["namespace"]),
            str(account["serviceaccount"]["name"]),
            str(account["serviceaccount"]["uid"]),
        )
