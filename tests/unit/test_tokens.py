"""ServiceAccount tokens: signed by one server, expiring when they say."""

from __future__ import annotations

import jwt
import pytest

from syncflow.devcluster.tokens import TokenExpiredError, TokenIssuer, TokenSubject

SUBJECT = TokenSubject("root", "ns", "robot", "uid-1")


def test_bound_token_names_its_account_until_it_expires() -> None:
    issuer = TokenIssuer()
    token, expires = issuer.mint(SUBJECT, 600, now=1_000_000)
    assert expires == 1_000_600
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["sub"] == "system:serviceaccount:ns:robot" and claims["exp"] == 1_000_600
    assert claims["kubernetes.io"]["serviceaccount"] == {"name": "robot", "uid": "uid-1"}
    assert issuer.verify(token, now=1_000_599) == SUBJECT
    with pytest.raises(TokenExpiredError):
        issuer.verify(token, now=1_000_600)


def test_legacy_token_names_its_secret_and_never_expires() -> None:
    issuer = TokenIssuer()
    subject = TokenSubject("", "ns", "robot", "uid-1", "robot-token", "uid-2")
    assert issuer.verify(issuer.mint_legacy(subject), now=10**12) == subject


def test_tokens_of_another_server_or_not_jwts_are_not_ours() -> None:
    token, _ = TokenIssuer().mint(SUBJECT, 600)
    assert TokenIssuer().verify(token) is None
    assert TokenIssuer().verify("s3cret") is None
    assert TokenIssuer().verify("a.b.c") is None
