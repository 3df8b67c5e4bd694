"""What a bootstrap reports when the API server refuses or cannot be reached: one kubectl-like line."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import urllib3
from kubernetes.client.exceptions import ApiException

from syncflow.util.neterrors import network_reason, server_error


class BootstrapError(Exception):
    """A bootstrap step failed; the message is meant for a person."""


@contextlib.contextmanager
def explained(action: str, name: str, server: str) -> Iterator[None]:
    """Turn the client's errors inside the block into :class:`BootstrapError` naming ``action`` ``name``."""
    try:
        yield
    except ApiException as exc:
        raise BootstrapError(server_error(exc, action, name)) from None
    except urllib3.exceptions.HTTPError as exc:
        raise BootstrapError(f"unable to connect to the server {server}: {network_reason(exc)}") from None
