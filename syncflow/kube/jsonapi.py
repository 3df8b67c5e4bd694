"""Plain JSON requests through the official client's transport (auth, TLS, proxies from kubeconfig).

The typed APIs deserialize into models and the DynamicClient runs discovery first; sync work
wants neither: it reads and writes objects as dicts at known paths. Requests carry the client's
headers and credentials but skip its generic request layers (parameter sanitising, a second JSON
encoding), and go over kept-alive connections (``syncflow.kube.transport``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import orjson
import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from syncflow.kube.transport import TRANSPORT_ERRORS, Answer, kept_connections
from syncflow.metrics import record as metrics
from syncflow.util.deadline import request_timeout

Obj = dict[str, Any]

JSON = "application/json"
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
UNREACHABLE = "unreachable:"
"""Cause of a failure to reach a named endpoint (``unreachable:<endpoint>``)."""
DEFAULT_TIMEOUT = (5.0, 30.0)
"""Connect and read timeouts (s) of one request; inside a task both are cut to the task's time left
(``syncflow.util.deadline``)."""
UNAVAILABLE = frozenset({502, 503, 504})
"""Answers that mean the API server behind a proxy or load balancer did not answer."""
AUTH = ["BearerToken"]
"""The client's credential settings a request carries (a kubeconfig's token, or its exec/auth plugin's)."""


def resource_path(group: str, version: str, plural: str, namespace: str = "", name: str = "") -> str:
    """``/api/v1/...`` or ``/apis/<group>/<version>/...`` for a resource, object or collection."""
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if namespace:
        path += f"/namespaces/{quote(namespace)}"
    path += f"/{plural}"
    if name:
        path += f"/{quote(name)}"
    return path


@lru_cache(maxsize=256)
def host_of(url: str) -> str:
    """The ``host:port`` of an endpoint URL, as client-go's request metrics name it."""
    return urlsplit(url).netloc


def encode(api: ApiClient, body: Any) -> bytes:
    """A request body as JSON: orjson, else the client's own serialisation (e.g. for its model objects
    or an integer past 64 bits)."""
    try:
        return orjson.dumps(body)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(api.sanitize_for_serialization(body)).encode()  # type: ignore[no-untyped-call]


def decode(body: bytes) -> Any:
    """An API server's JSON answer: orjson (a few times faster), else the standard library for what
    orjson refuses but JSON allows (e.g. an escaped lone surrogate). orjson reads an integer past 64
    bits as a float, as a Kubernetes API server (Go, int64 or float64) already serves it."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)


class JsonApi:
    """JSON requests against one API endpoint; errors raise the client's ``ApiException``.

    ``before_request`` runs before every request, e.g. to take from a shared request budget. With an
    ``endpoint`` name, each request's outcome is that endpoint's connection status (metrics).
    ``prefix`` goes before every request's path (e.g. ``/clusters/<name>``): the endpoints of many
    kcp logical clusters served at one URL then share one client and its kept-alive connections.
    Every request counts in ``rest_client_requests_total`` by its answer's status, method and host.
    """

    def __init__(
        self,
        api: ApiClient,
        timeout: tuple[float, float] = DEFAULT_TIMEOUT,
        before_request: Callable[[], None] | None = None,
        endpoint: str = "",
        prefix: str = "",
    ) -> None:
        self.api = api
        self.timeout = timeout
        self.before_request = before_request
        self.endpoint = endpoint
        self.prefix = prefix.rstrip("/")

    @property
    def host(self) -> str:
        """The endpoint URL (the client's, then the prefix)."""
        return str(self.api.configuration.host) + self.prefix

    def send(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        timeout: tuple[float, float] = DEFAULT_TIMEOUT,
    ) -> urllib3.BaseHTTPResponse:
        """Send one request without a body through the client's urllib3 pool and return the unread
        response (a watch stream); transport failures raise urllib3's errors, any status returns."""
        target, headers, _ = self._prepare(method, path, query, None, "")
        try:
            response = self._through_pool(method, target, headers, None, timeout, preload=False)
        except TRANSPORT_ERRORS:
            metrics.request(method, self._host(), None)
            raise
        metrics.request(method, self._host(), response.status)
        return response

    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> Obj:
        """Send one request and return the decoded JSON body (``accept``: e.g. ``METADATA_LIST``)."""
        if self.before_request is not None:
            self.before_request()
        timeout = request_timeout(self.timeout)
        target, headers, payload = self._prepare(method, path, query or (), body, content_type, accept)
        kept = kept_connections(self.api)
        try:
            if kept is not None:
                answer = kept.exchange(method, target, payload, headers, timeout)
            else:
                raw = self._through_pool(method, target, headers, payload, timeout, preload=True)
                answer = Answer(raw.status, raw.reason or "", raw.headers, raw.data)
        except TRANSPORT_ERRORS as exc:
            metrics.request(method, self._host(), None)
            metrics.connection(self.endpoint, False)
            if self.endpoint:  # keys that fail for it are retried as soon as the endpoint answers again
                exc.cause = f"{UNREACHABLE}{self.endpoint}"  # type: ignore[union-attr]
            raise
        metrics.request(method, self._host(), answer.status)
        metrics.connection(self.endpoint, answer.status not in UNAVAILABLE)
        if not 200 <= answer.status <= 299:  # redirects are not followed: an API server sends none
            error = ApiException(http_resp=answer)
            error.endpoint = self.endpoint  # type: ignore[attr-defined]  # which side refused
            raise error
        return decode(answer.data) if answer.data else {}

    def _host(self) -> str:
        return host_of(str(self.api.configuration.host))

    def _prepare(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | Iterable[tuple[str, str]],
        body: Any,
        content_type: str,
        accept: str = JSON,
    ) -> tuple[str, dict[str, str], bytes | None]:
        """The request's path (after the prefix) and query, its headers with the client's credentials
        (refreshed as the client refreshes them) and its encoded body."""
        api = self.api
        headers = {**api.default_headers, "Accept": accept}
        if api.cookie:
            headers["Cookie"] = api.cookie
        if body is not None:
            headers["Content-Type"] = content_type
        queries = list(query.items() if isinstance(query, Mapping) else query)
        path = self.prefix + path
        api.update_params_for_auth(headers, queries, AUTH, path, method, body)
        target = f"{path}?{urlencode(queries, quote_via=quote)}" if queries else path
        return target, headers, None if body is None else encode(api, body)

    def _through_pool(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        payload: bytes | None,
        timeout: tuple[float, float],
        *,
        preload: bool,
    ) -> urllib3.BaseHTTPResponse:
        response: urllib3.BaseHTTPResponse = self.api.rest_client.pool_manager.urlopen(
            method,
            str(self.api.configuration.host) + target,
            body=payload,
            headers=headers,
            timeout=urllib3.Timeout(connect=timeout[0], read=timeout[1]),
            preload_content=preload,
        )
        return response

    def get(self, path: str, **query: str) -> Obj:
        """GET an object or a list."""
        return self.request("GET", path, query=query)

    def get_metadata(self, path: str, **query: str) -> Obj:
        """GET a list of the objects' metadata only (``PartialObjectMetadataList``): what a pass that
        reads no object's content needs, at a fraction of the bytes to send and decode. A server that
        cannot serve it sends the whole list."""
        return self.request("GET", path, query=query, accept=METADATA_LIST)

    def exists(self, path: str) -> bool:
        """Whether GET ``path`` (an object, a list or a discovery document) answers; False on a 404."""
        try:
            self.get(path)
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def create(self, path: str, body: Obj) -> Obj:
        """POST an object to a collection path."""
        return self.request("POST", path, body=body)

    def replace(self, path: str, body: Obj) -> Obj:
        """PUT an object (or a subresource such as ``/status``)."""
        return self.request("PUT", path, body=body)

    def merge_patch(self, path: str, patch: Obj) -> Obj:
        """PATCH with a JSON merge patch."""
        return self.request("PATCH", path, body=patch, content_type=MERGE_PATCH)

    def json_patch(self, path: str, operations: list[Obj]) -> Obj:
        """PATCH with a JSON patch (RFC 6902)."""
        return self.request("PATCH", path, body=operations, content_type=JSON_PATCH)

    def delete(self, path: str, body: Obj | None = None, **query: str) -> Obj:
        """DELETE an object (``body``: DeleteOptions, e.g. preconditions)."""
        return self.request("DELETE", path, query=query, body=body)
