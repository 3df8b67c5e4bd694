"""Network failures described for people: the innermost reason ("Connection refused") and URLs shown
without their password."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def network_reason(exc: BaseException) -> str:
    """The innermost cause of a client library's network error, e.g. "Connection refused"."""
    current: BaseException | None = exc
    innermost = exc
    while current is not None:
        innermost = current
        reason = getattr(current, "reason", None)
        current = reason if isinstance(reason, BaseException) else current.__cause__ or current.__context__
    if isinstance(innermost, OSError) and innermost.strerror:
        return innermost.strerror
    return str(innermost)


def display_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (fit for logs and error messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
