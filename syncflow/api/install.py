"""Install CRDs into a cluster: create or replace each, then wait until it is Established."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from syncflow.kube.clients import KubeconfigError, load_client
from syncflow.util.neterrors import network_reason, server_error

_TIMEOUT = (5.0, 30.0)
"""Connect and read timeouts of each request, in seconds."""
_POLL = 0.2
_CONFLICT_ATTEMPTS = 5


class InstallError(Exception):
    """Installing failed; the message is meant for a person (kubectl-like)."""


def _body(response: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(response.data)
    return data


def _server_error(exc: ApiException, action: str, name: str) -> InstallError:
    return InstallError(server_error(exc, action, name))


def _apply(api: client.ApiextensionsV1Api, crd: Mapping[str, Any]) -> str:
    """Create ``crd`` or replace the existing one; returns "created" or "configured"."""
    name = crd["metadata"]["name"]
    try:
        # The client sends plain dicts as they are; its models would drop fields they do not know.
        api.create_custom_resource_definition(
            crd,  # type: ignore[arg-type]
            _preload_content=False,
            _request_timeout=_TIMEOUT,
        )
        return "created"
    except ApiException as exc:
        if exc.status != 409:
            raise _server_error(exc, "creating", name) from None
    for _ in range(_CONFLICT_ATTEMPTS):
        current = _body(
            api.read_custom_resource_definition(name, _preload_content=False, _request_timeout=_TIMEOUT)
        )
        desired = copy.deepcopy(dict(crd))
        desired["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        try:
            api.replace_custom_resource_definition(
                name,
                desired,  # type: ignore[arg-type]
                _preload_content=False,
                _request_timeout=_TIMEOUT,
            )
            return "configured"
        except ApiException as exc:
            if exc.status != 409:
                raise _server_error(exc, "replacing", name) from None
    raise InstallError(f"{name} kept changing while being replaced; try again")


def _conditions(crd: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {c.get("type", ""): c for c in (crd.get("status") or {}).get("conditions") or []}


def _wait_established(
    api: client.ApiextensionsV1Api, name: str, deadline: float, echo: Callable[[str], None]
) -> None:
    echo(f"waiting for customresourcedefinition/{name} to be Established")
    while True:
        crd = _body(
            api.read_custom_resource_definition(name, _preload_content=False, _request_timeout=_TIMEOUT)
        )
        conditions = _conditions(crd)
        established = conditions.get("Established", {})
        if established.get("status") == "True":
            echo(f"customresourcedefinition.apiextensions.k8s.io/{name} condition met")
            return
        names = conditions.get("NamesAccepted", {})
        if names.get("status") == "False":
            raise InstallError(f"{name}: names not accepted: {names.get('message', '')}")
        if time.monotonic() >= deadline:
            last = established.get("message") or "no Established condition yet"
            raise InstallError(f"timed out waiting for {name} to be Established: {last}")
        time.sleep(_POLL)


def apply_crds(
    crds: Sequence[Mapping[str, Any]],
    *,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    echo: Callable[[str], None],
) -> None:
    """Create or update ``crds`` and wait (at most ``timeout`` seconds) until each is Established.

    ``kubeconfig`` ``None`` means ``$KUBECONFIG`` or ``~/.kube/config``. Raises :class:`InstallError`.
    """
    try:
        api_client = load_client(kubeconfig, context)
    except KubeconfigError as exc:
        raise InstallError(str(exc)) from None
    try:
        install_crds(api_client, crds, timeout=timeout, echo=echo)
    finally:
        api_client.close()  # type: ignore[no-untyped-call]


def install_crds(
    api_client: client.ApiClient,
    crds: Sequence[Mapping[str, Any]],
    *,
    timeout: float,
    echo: Callable[[str], None],
) -> None:
    """:func:`apply_crds` through a client the caller owns (e.g. one aimed at a kcp workspace)."""
    api = client.ApiextensionsV1Api(api_client)
    try:
        for crd in crds:
            outcome = _apply(api, crd)
            echo(f"customresourcedefinition.apiextensions.k8s.io/{crd['metadata']['name']} {outcome}")
        deadline = time.monotonic() + timeout
        for crd in crds:
            _wait_established(api, crd["metadata"]["name"], deadline, echo)
    except ApiException as exc:
        raise _server_error(exc, "reading", "customresourcedefinitions") from None
    except urllib3.exceptions.HTTPError as exc:
        raise InstallError(
            f"unable to connect to the server {api_client.configuration.host}: {network_reason(exc)}"
        ) from None
