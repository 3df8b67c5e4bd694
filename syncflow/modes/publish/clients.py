"""Publish mode's endpoints: ``kcp`` is the APIExport's virtual workspace, ``service`` the service cluster."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubernetes.client import ApiClient

from syncflow.kube.clients import for_url
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.publish.endpoint import ExportEndpoint, resolve
from syncflow.modes.publish.rules import KCP, SERVICE
from syncflow.queue.errors import TransientError

BeforeRequest = Callable[[], None] | None


@dataclass
class PublishEndpoints:
    """Clients of the virtual workspace (per logical cluster, and ``*`` per shard URL) and the service
    cluster. ``endpoint`` is resolved on first use unless the watcher keeps it current."""

    kcp: ApiClient
    service: JsonApi
    slice_ref: str
    kcp_budget: BeforeRequest = None
    endpoint: ExportEndpoint | None = None
    _clients: dict[str, ApiClient] = field(default_factory=dict)

    def _urls(self) -> tuple[str, ...]:
        if self.endpoint is None or not self.endpoint.urls:
            self.endpoint = resolve(self.kcp, self.slice_ref)
        if not self.endpoint.urls:
            raise TransientError("the APIExport has no virtual workspace URL yet (no workspace binds it)")
        return self.endpoint.urls

    def _vw(self, url: str, cluster: str) -> JsonApi:
        """Logical cluster ``cluster`` of the virtual workspace at ``url``: every cluster of one URL
        shares its client, so a process keeps one connection per URL and thread, not per cluster."""
        return JsonApi(
            self._client(url), before_request=self.kcp_budget, endpoint=KCP, prefix=f"/clusters/{cluster}"
        )

    def _client(self, url: str) -> ApiClient:
        """The client of ``url``. Making one forgets those of URLs the endpoint no longer lists (a
        shard gone from the slice), so the map holds at most the URLs in use; a forgotten client and
        its connections are freed once no request or watch holds it."""
        client = self._clients.get(url)
        if client is None:
            listed = set(self._urls())
            for gone in [known for known in list(self._clients) if known not in listed]:
                self._clients.pop(gone, None)  # another thread may have forgotten it already
            client = self._clients[url] = for_url(self.kcp, url)
        return client

    def api(self, endpoint: str, cluster: str) -> JsonApi:
        """The virtual workspace of one logical cluster, or the service cluster."""
        if endpoint == SERVICE:
            return self.service
        if endpoint != KCP:
            raise ValueError(f"publish mode has no endpoint {endpoint!r}")
        return self._vw(self._urls()[0], cluster)

    def everywhere(self, endpoint: str) -> list[JsonApi]:
        """``*`` of every virtual workspace URL, or the service cluster."""
        if endpoint == SERVICE:
            return [self.service]
        return [self._vw(url, "*") for url in self._urls()]
