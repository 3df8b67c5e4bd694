"""The HTTP face of devcluster: routes Kubernetes API requests to the object layer."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml
from aiohttp import web

from syncflow.devcluster import (
    deadlines,
    discovery,
    errors,
    limits,
    openapi,
    openapiproto,
    podactions,
    protobuf,
    reviews,
    routing,
    scale,
    tables,
)
from syncflow.devcluster.allocators import ServiceAllocator
from syncflow.devcluster.crud import APPLY_PATCH, Objects, Target, field_labels
from syncflow.devcluster.errors import StatusError
from syncflow.devcluster.lifecycle import Lifecycle
from syncflow.devcluster.managedfields import Tracking, default_manager
from syncflow.devcluster.options import WriteOptions, write_options
from syncflow.devcluster.rbac import ADMIN, ADMIN_IDENTITY, Identity
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.resources import BUILTIN_TYPES, ResourceType
from syncflow.devcluster.rootca import RootCAPublisher
from syncflow.devcluster.serviceaccounts import ServiceAccounts
from syncflow.devcluster.shapes import shape_of
from syncflow.devcluster.store import Obj, Store
from syncflow.devcluster.views import View
from syncflow.devcluster.watch import WatchRequest, WatchStream, default_timeout
from syncflow.util.logs import log_event
from syncflow.util.selectors import FieldSelector, LabelSelector, Op, SelectorError

logger = logging.getLogger("syncflow.devcluster")

PLAIN_CLUSTER = ""
_UNAUTHENTICATED_PATHS = frozenset({"/healthz", "/readyz", "/livez"})
REQUEST_COUNTS_PATH = "/debug/requests"
"""Requests served so far, by HTTP method (for benchmarks: API requests per synced object)."""
OPEN_WATCHES_PATH = "/debug/watches"
"""Watch streams being served now, as ``{"open": n}`` (for tests and benchmarks)."""
DEBUG_PATHS = frozenset({REQUEST_COUNTS_PATH, OPEN_WATCHES_PATH})
_UNDELAYED_PATHS = _UNAUTHENTICATED_PATHS | DEBUG_PATHS


@dataclass
class ServerConfig:
    """Tunables of one devcluster server."""

    tokens: dict[str, str] = field(default_factory=dict)  # bearer token -> identity; empty = open
    bookmark_interval: float = 60.0
    watch_history: int = 10_000
    min_request_timeout: float = 1800.0
    request_timeout: float = deadlines.DEFAULT_REQUEST_TIMEOUT  # seconds a non-watch request may take
    server_address: str = "127.0.0.1:6443"
    external_url: str = "http://127.0.0.1:6443"
    ca_pem: str = ""  # the serving CA (PEM), in ServiceAccount token Secrets and kube-root-ca.crt ConfigMaps
    latency: float = 0.0  # seconds added before every API request is served, to play a remote server


def identity_of(request: web.Request) -> Identity:
    """Who sent the request (the admin on a server without tokens)."""
    identity = request.get("identity", ADMIN_IDENTITY)
    assert isinstance(identity, Identity)
    return identity


def json_response(body: Any, status: int = 200, warnings: list[str] | None = None) -> web.Response:
    """A JSON response encoded with orjson, with a ``Warning: 299`` header per warning."""
    response = web.Response(body=orjson.dumps(body), status=status, content_type="application/json")
    for warning in warnings or ():
        response.headers.add("Warning", "299 - " + orjson.dumps(warning).decode())
    return response


def _bool_param(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "1")


class DevCluster:
    """One API server: storage, resource types, object semantics and the aiohttp application."""

    def __init__(
        self, config: ServerConfig | None = None, builtin_types: tuple[ResourceType, ...] | None = None
    ) -> None:
        self.config = config or ServerConfig()
        self.store = Store(history=self.config.watch_history)
        self.registry = Registry(BUILTIN_TYPES if builtin_types is None else builtin_types)
        self.objects = Objects(self.store)
        self.lifecycle = Lifecycle(self.objects, self.registry)
        self.service_accounts = ServiceAccounts(self.objects, self.registry, lambda: self.config.ca_pem)
        RootCAPublisher(self.objects, self.registry, lambda: self.config.ca_pem)
        ServiceAllocator(self.objects)
        self.request_counts: Counter[str] = Counter()
        self.bootstrap()

    def bootstrap(self) -> None:
        """Create the initial state (a plain server: one cluster with the usual namespaces)."""
        self.lifecycle.create_cluster(PLAIN_CLUSTER)

    def app(self) -> web.Application:
        """The aiohttp application serving the API."""
        application = web.Application(
            middlewares=[self._errors, self._latency, self._authenticate, self._deadline],
            client_max_size=limits.MAX_REQUEST_BODY_BYTES,
        )
        application.router.add_route("*", "/{path:.*}", self._dispatch)
        return application

    # ----- middleware -----

    @web.middleware
    async def _errors(self, request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            response: web.StreamResponse = await handler(request)
            return response
        except StatusError as exc:
            return json_response(exc.body(), exc.code)
        except SelectorError as exc:
            return json_response(errors.bad_request(str(exc)).body(), 400)
        except web.HTTPRequestEntityTooLarge:
            return json_response(limits.request_entity_too_large().body(), 413)
        except web.HTTPException:
            raise
        except Exception as exc:
            log_event(
                logger,
                "request.failed",
                level=logging.ERROR,
                method=request.method,
                path=request.path,
                error=repr(exc),
            )
            logger.exception("unhandled error")
            failure = StatusError(500, "InternalError", f"Internal error occurred: {exc}")
            return json_response(failure.body(), 500)

    @web.middleware
    async def _latency(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Delay API requests by ``--latency`` (not health checks or counters) without blocking others."""
        if self.config.latency > 0 and request.path not in _UNDELAYED_PATHS:
            await asyncio.sleep(self.config.latency)
        response: web.StreamResponse = await handler(request)
        return response

    @web.middleware
    async def _authenticate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path not in DEBUG_PATHS:
            self.request_counts[request.method] += 1
        if request.path not in _UNAUTHENTICATED_PATHS:
            header = request.headers.get("Authorization", "")
            identity = self.identify(header[len("Bearer ") :] if header.startswith("Bearer ") else "")
            if identity is None and self.config.tokens:
                raise errors.unauthorized()
            if identity is not None:
                request["identity"] = identity
        response: web.StreamResponse = await handler(request)
        return response

    @web.middleware
    async def _deadline(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if deadlines.is_long_running(request.query):
            long_running: web.StreamResponse = await handler(request)
            return long_running
        limit = asyncio.timeout(deadlines.request_deadline(request.query, self.config.request_timeout))
        try:
            async with limit:
                response: web.StreamResponse = await handler(request)
                return response
        except TimeoutError:
            if limit.expired():
                raise deadlines.timed_out() from None
            raise

    def identify(self, token: str) -> Identity | None:
        """Who a bearer token names: a ``--token`` identity or a ServiceAccount (None: unknown)."""
        if token in self.config.tokens:
            name = self.config.tokens[token]
            return ADMIN_IDENTITY if name == ADMIN else Identity(name)
        return self.service_accounts.authenticate(token) if token else None

    # ----- routing -----

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        segments = [s for s in request.path.split("/") if s]
        view = View(self.registry, PLAIN_CLUSTER, identity_of(request), self.store)
        return await self.serve(request, view, segments)

    async def serve(
        self, request: web.Request, view: View, segments: list[str], url_prefix: str = ""
    ) -> web.StreamResponse:
        """Serve a request through ``view``; ``segments`` is the path after any prefix (``url_prefix``)."""
        path = "/" + "/".join(segments)
        if path in _UNAUTHENTICATED_PATHS:
            return web.Response(text="ok")
        if path == "/version":
            return json_response(discovery.version_info())
        if path in DEBUG_PATHS:
            if self.config.tokens and not view.identity.is_admin:
                raise errors.forbidden(f'forbidden: User "{view.identity.user}" cannot get path "{path}"')
            if path == REQUEST_COUNTS_PATH:
                return json_response(dict(self.request_counts))
            return json_response({"open": self.store.open_watches()})
        if segments[:2] == ["openapi", "v3"]:
            view.authorize_discovery()
            return self._openapi(view, segments[2:], url_prefix)
        if segments == ["openapi", "v2"]:
            view.authorize_discovery()
            accept = request.headers.get("Accept", "")
            document = openapi.v2_document(view.types())
            if any(media_type in accept for media_type in openapiproto.ACCEPTED):
                return web.Response(body=openapiproto.encode(document), content_type=openapiproto.MEDIA_TYPE)
            if not openapi.accepts_json(accept):
                raise StatusError(
                    406, "NotAcceptable", f"only application/json and {openapiproto.MEDIA_TYPE}"
                )
            return json_response(document)
        parsed = routing.parse(segments)
        if isinstance(parsed, routing.DiscoveryPath):
            view.authorize_discovery()
            return self._discovery(view, parsed)
        if isinstance(parsed, routing.ApiPath):
            if not parsed.resource:
                view.authorize_discovery()
                doc = discovery.resource_list(view.types(), parsed.group, parsed.version)
                if doc is None:
                    raise _not_served()
                return json_response(doc)
            return await self._resource(request, view, parsed)
        raise _not_served()

    def _discovery(self, view: View, path: routing.DiscoveryPath) -> web.Response:
        if path.group is None:
            return json_response(discovery.api_versions(self.config.server_address))
        if path.group == "":
            return json_response(discovery.api_group_list(view.types()))
        doc = discovery.api_group(view.types(), path.group)
        if doc is None:
            raise _not_served()
        return json_response(doc)

    def _openapi(self, view: View, rest: list[str], url_prefix: str) -> web.Response:
        if not rest:
            return json_response(openapi.root_document(view.types(), url_prefix))
        parsed = routing.parse(rest)
        if isinstance(parsed, routing.ApiPath) and not parsed.resource:
            doc = openapi.group_version_document(view.types(), parsed.group, parsed.version)
            if doc is not None:
                return json_response(doc)
        raise _not_served()

    # ----- resources -----

    async def _resource(self, request: web.Request, view: View, path: routing.ApiPath) -> web.StreamResponse:
        rtype = view.lookup(path.group, path.version, path.resource)
        if rtype is None or (path.namespace is not None and not rtype.namespaced):
            raise _not_served()
        if path.subresource and not rtype.has_subresource(path.subresource):
            raise _not_served()
        if rtype.namespaced and path.name and path.namespace is None:
            raise _not_served()
        method = request.method
        verb = _verb(method, path, request.query)
        if not path.subresource and verb not in rtype.verbs:
            raise errors.method_not_allowed("the server does not allow this method on the requested resource")
        if not reviews.open_to_everyone(rtype):
            name = path.name or _selected_name(verb, rtype, request.query)
            view.authorize(verb, rtype, path.namespace, name, path.subresource)
        cluster = view.cluster or ""
        t = Target(cluster, rtype, path.version)
        namespace = (path.namespace or "") if rtype.namespaced else ""
        if not path.name:
            if method == "GET":
                return await self._list_or_watch(request, view, t, path.namespace)
            if method == "POST":
                if rtype.namespaced and path.namespace is None:
                    raise errors.method_not_allowed(f"POST on cluster-wide {rtype.plural} is not allowed")
                body = await self._body(request)
                if (rtype.group, rtype.plural) == ("", "bindings"):
                    name = str(((body or {}).get("metadata") or {}).get("name") or "")
                    return json_response(
                        podactions.bind(self.objects, self._pods(t), namespace, name, body), 201
                    )
                if reviews.is_review(rtype):
                    return json_response(
                        reviews.answer(view, rtype, t.api_version, namespace, body, self.identify), 201
                    )
                options = _options("Create", request)
                with self.objects.writing(options.dry_run, options.field_validation) as warnings:
                    created = self.objects.create(t, namespace, body, _tracking(request, t, options).updated)
                return json_response(present(view, t, cluster, created), 201, warnings)
            if method == "DELETE":
                return await self._delete_collection(request, view, t, path.namespace)
            raise errors.method_not_allowed("the server does not allow this method on the requested resource")
        if method == "PATCH" and path.subresource in ("", "status") and _content_type(request) == APPLY_PATCH:
            return await self._apply(request, view, t, namespace, path)
        current = self.objects.get(t, namespace, path.name)
        if not view.visible(cluster, rtype, current):
            raise errors.not_found(rtype.plural, path.name, rtype.group)
        if path.subresource == "scale":
            return await self._scale(request, t, current)
        if path.subresource in ("binding", "eviction"):
            if method != "POST":
                raise errors.method_not_allowed(
                    "the server does not allow this method on the requested resource"
                )
            action = podactions.bind if path.subresource == "binding" else podactions.evict
            return json_response(
                action(self.objects, t, namespace, path.name, await self._body(request)), 201
            )
        if path.subresource == "token":
            if method != "POST":
                raise errors.method_not_allowed(
                    "the server does not allow this method on the requested resource"
                )
            minted = self.service_accounts.token_request(
                cluster, namespace, path.name, await self._body(request)
            )
            return json_response(minted, 201)
        if method == "GET":
            shown = present(view, t, cluster, current)
            if tables.wants_table(request.headers.get("Accept", "")):
                return json_response(
                    tables.table(
                        t.rtype,
                        t.version,
                        [shown],
                        resource_version=shown["metadata"]["resourceVersion"],
                        include_object=request.query.get("includeObject", "Metadata"),
                    )
                )
            return json_response(shown)
        if method == "PUT":
            body = await self._body(request)
            options = _options("Update", request)
            with self.objects.writing(options.dry_run, options.field_validation) as warnings:
                track = _tracking(request, t, options, path.subresource).updated
                updated = self.objects.update(t, namespace, path.name, body, path.subresource, track)
            return json_response(present(view, t, cluster, updated), warnings=warnings)
        if method == "PATCH":
            content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
            raw = await request.read()
            options = _options("Patch", request, patch_type=content_type)
            with self.objects.writing(options.dry_run, options.field_validation) as warnings:
                track = _tracking(request, t, options, path.subresource).updated
                patched = self.objects.patch(
                    t, namespace, path.name, content_type, raw, path.subresource, track
                )
            return json_response(present(view, t, cluster, patched), warnings=warnings)
        if method == "DELETE" and not path.subresource:
            delete_options = await self._delete_options(request)
            options = _options("Delete", request, body_options=delete_options)
            with self.objects.writing(options.dry_run):
                result = self.objects.delete(t, namespace, path.name, delete_options)
            return json_response(present(view, t, cluster, result))  # as kube: the object, not a Status
        raise errors.method_not_allowed("the server does not allow this method on the requested resource")

    def _pods(self, t: Target) -> Target:
        pods = self.registry.by_group_resource(t.cluster, "", "pods")
        if pods is None:
            raise _not_served()
        return Target(t.cluster, pods, "v1")

    async def _body(self, request: web.Request) -> Any:
        raw = await request.read()
        content_type = request.headers.get("Content-Type", "application/json").split(";")[0].strip()
        try:
            if content_type in ("application/yaml", "application/x-yaml"):
                return yaml.safe_load(raw)
            if content_type in ("application/json", ""):
                return orjson.loads(raw)
            if content_type == protobuf.MEDIA_TYPE:
                return protobuf.decode(raw)
        except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
            raise errors.bad_request(f"error decoding the request body: {exc}") from None
        except protobuf.ProtobufError as exc:
            raise errors.unsupported_media_type(str(exc)) from None
        raise errors.unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: "
            f"application/json, application/yaml, {protobuf.MEDIA_TYPE} (got {content_type})"
        )

    async def _delete_options(self, request: web.Request) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if request.can_read_body:
            raw = await request.read()
            if raw.strip():
                try:
                    loaded = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    raise errors.bad_request(f"error decoding DeleteOptions: {exc}") from None
                if isinstance(loaded, dict):
                    options = loaded
        for param in ("propagationPolicy", "gracePeriodSeconds"):
            if param in request.query:
                options[param] = request.query[param]
        return options

    def _selectors(self, request: web.Request, rtype: ResourceType) -> tuple[LabelSelector, FieldSelector]:
        labels = LabelSelector.parse(request.query.get("labelSelector", ""))
        fields = FieldSelector.parse(request.query.get("fieldSelector", ""), field_labels(rtype))
        return labels, fields

    async def _list_or_watch(
        self, request: web.Request, view: View, t: Target, namespace: str | None
    ) -> web.StreamResponse:
        labels, fields = self._selectors(request, t.rtype)
        query = request.query

        def visible(cluster: str, obj: Obj) -> bool:
            return view.visible(cluster, t.rtype, obj)

        if _bool_param(query.get("watch")):
            timeout = (
                float(query["timeoutSeconds"])
                if "timeoutSeconds" in query
                else default_timeout(self.config.min_request_timeout)
            )
            send_initial = query.get("sendInitialEvents")
            watch_request = WatchRequest(
                cluster=view.cluster,
                group=t.rtype.group,
                plural=t.rtype.plural,
                namespace=namespace,
                resource_version=query.get("resourceVersion", ""),
                label_selector=labels,
                field_selector=fields,
                timeout=timeout,
                bookmarks=_bool_param(query.get("allowWatchBookmarks")),
                send_initial_events=None if send_initial is None else _bool_param(send_initial),
                visible=visible,
            )
            as_table = tables.wants_table(request.headers.get("Accept", ""))
            include = query.get("includeObject", "Metadata")

            def show(cluster: str, obj: Obj) -> Obj:
                shown = present(view, t, cluster, obj)
                if as_table:
                    return tables.table(
                        t.rtype,
                        t.version,
                        [shown],
                        resource_version=shown["metadata"].get("resourceVersion", ""),
                        include_object=include,
                    )
                return shown

            def bookmark(rv: int) -> Obj:
                return {
                    "kind": t.rtype.kind,
                    "apiVersion": t.api_version,
                    "metadata": {"resourceVersion": str(rv)},
                }

            stream = WatchStream(self.store, watch_request, show, bookmark, self.config.bookmark_interval)
            return await stream.serve(request)
        try:
            limit = int(query.get("limit", "0") or 0)
        except ValueError:
            raise errors.bad_request(f"invalid limit: {query.get('limit')}") from None
        page = self.objects.list(
            view.cluster,
            t.rtype,
            namespace,
            label_selector=labels,
            field_selector=fields,
            limit=limit,
            continue_token=query.get("continue", ""),
            visible=visible,
        )
        items = [present(view, t, cluster, obj) for cluster, obj in page.items]
        if tables.wants_table(request.headers.get("Accept", "")):
            return json_response(
                tables.table(
                    t.rtype,
                    t.version,
                    items,
                    resource_version=str(page.resource_version),
                    continue_token=page.continue_token,
                    include_object=query.get("includeObject", "Metadata"),
                )
            )
        metadata: dict[str, Any] = {"resourceVersion": str(page.resource_version)}
        if page.continue_token:
            metadata["continue"] = page.continue_token
        if page.remaining is not None:
            metadata["remainingItemCount"] = page.remaining
        if tables.wants_metadata_list(request.headers.get("Accept", "")):
            return json_response(tables.metadata_list(items, metadata))
        return json_response(
            {"kind": t.rtype.list_kind, "apiVersion": t.api_version, "metadata": metadata, "items": items}
        )

    async def _delete_collection(
        self, request: web.Request, view: View, t: Target, namespace: str | None
    ) -> web.Response:
        labels, fields = self._selectors(request, t.rtype)
        delete_options = await self._delete_options(request)
        options = _options("Delete", request, body_options=delete_options)
        page = self.objects.list(
            t.cluster,
            t.rtype,
            namespace,
            label_selector=labels,
            field_selector=fields,
            visible=lambda cluster, obj: view.visible(cluster, t.rtype, obj),
        )
        deleted = []
        for _, obj in page.items:
            meta = obj["metadata"]
            with self.objects.writing(options.dry_run):
                removed = self.objects.delete(t, meta.get("namespace", ""), meta["name"], delete_options)
            deleted.append(present(view, t, t.cluster, removed))
        return json_response(
            {
                "kind": t.rtype.list_kind,
                "apiVersion": t.api_version,
                "metadata": {"resourceVersion": str(self.store.resource_version)},
                "items": deleted,
            }
        )

    async def _apply(
        self, request: web.Request, view: View, t: Target, namespace: str, path: routing.ApiPath
    ) -> web.Response:
        """Server-side apply: 201 when it created the object, else 200."""
        raw = await request.read()
        options = _options("Patch", request, patch_type=APPLY_PATCH)
        existing = self.store.get(t.cluster, t.rtype.group, t.rtype.plural, namespace, path.name)
        if existing is not None and not view.visible(t.cluster, t.rtype, existing):
            raise errors.not_found(t.rtype.plural, path.name, t.rtype.group)
        tracking = _tracking(request, t, options, path.subresource)
        with self.objects.writing(options.dry_run, options.field_validation) as warnings:
            applied = self.objects.apply(t, namespace, path.name, raw, tracking, options.force)
        code = 200 if existing is not None else 201
        return json_response(present(view, t, t.cluster, applied), code, warnings)

    async def _scale(self, request: web.Request, t: Target, obj: Obj) -> web.Response:
        assert t.rtype.scale is not None
        if request.method == "GET":
            return json_response(scale.scale_of(t.rtype.scale, obj))
        if request.method == "PUT":
            wanted = await self._body(request)
            options = _options("Update", request)
        elif request.method == "PATCH":
            content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
            wanted = scale.patch_scale(scale.scale_of(t.rtype.scale, obj), content_type, await request.read())
            options = _options("Patch", request, patch_type=content_type)
        else:
            raise errors.method_not_allowed("the server does not allow this method on the requested resource")
        with self.objects.writing(options.dry_run):
            wanted_obj = scale.with_replicas(t.rtype.scale, obj, wanted)
            updated = self.objects.replace(t, obj, wanted_obj, "", _tracking(request, t, options).updated)
        return json_response(scale.scale_of(t.rtype.scale, updated))


def present(view: View, t: Target, cluster: str, obj: Obj) -> Obj:
    """An object as served at the request's version, through ``view``."""
    shown = {**obj, "apiVersion": t.api_version, "kind": t.rtype.kind}
    if t.rtype.converter is not None:
        shown = t.rtype.converter.from_storage(shown, t.version)
    return view.present(cluster, shown)


def _verb(method: str, path: routing.ApiPath, query: Any) -> str:
    """The Kubernetes verb of a request (as RBAC names it)."""
    if method == "GET":
        if path.name:
            return "get"
        return "watch" if _bool_param(query.get("watch")) else "list"
    if method == "DELETE":
        return "delete" if path.name else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


def _selected_name(verb: str, rtype: ResourceType, query: Any) -> str:
    """The name a list or watch selects with ``fieldSelector=metadata.name=<name>`` (else ""): RBAC
    authorises it by that name, as kube-apiserver does, so ``resourceNames`` can grant it."""
    if verb not in ("list", "watch"):
        return ""
    try:
        fields = FieldSelector.parse(query.get("fieldSelector", ""), field_labels(rtype))
    except SelectorError:
        return ""
    exact = (t.value for t in fields.terms if t.field == "metadata.name" and t.op is not Op.NOT_EQUALS)
    return next(exact, "")


def _content_type(request: web.Request) -> str:
    return request.headers.get("Content-Type", "").split(";")[0].strip()


def _tracking(request: web.Request, t: Target, options: WriteOptions, subresource: str = "") -> Tracking:
    """How a write by this request's field manager updates managedFields."""
    manager = options.field_manager or default_manager(request.headers.get("User-Agent", ""))
    return Tracking(
        manager, shape_of(t.rtype, t.version), t.api_version, t.rtype.status_subresource, subresource
    )


def _options(
    kind: str, request: web.Request, *, patch_type: str = "", body_options: dict[str, Any] | None = None
) -> WriteOptions:
    return write_options(
        kind,
        request.query,
        request.query.getall("dryRun", []),
        patch_type=patch_type,
        body_options=body_options,
    )


def _not_served() -> StatusError:
    return StatusError(404, "NotFound", "the server could not find the requested resource")
