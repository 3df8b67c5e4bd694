"""The console's web app (Starlette): server-rendered pages (Jinja2), their JSON API under ``/api``,
and static files from this package. Routes and the DOM's ``data-testid`` names are a contract
(docs/console.md); the pages poll the JSON API from ``static/console.js`` for live updates."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from syncflow.console.filters import FilterError, Filters
from syncflow.console.models import STATES
from syncflow.console.pages import DEFAULT_LIMIT, MAX_LIMIT, TokenError
from syncflow.console.reader import Reader
from syncflow.console.security import CSRF_FIELD, CSRF_HEADER, Auth, same_origin

logger = logging.getLogger("syncflow.console")

_PACKAGE = resources.files(__package__)
OPEN_PATHS = ("/healthz", "/static/")
"""Paths served without credentials (no object data there)."""


def _json(model: BaseModel, status: int = 200) -> JSONResponse:
    return JSONResponse(model.model_dump(mode="json", by_alias=True), status_code=status)


def _problem(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class Guard(BaseHTTPMiddleware):
    """Authentication on every path but ``OPEN_PATHS`` (401 with a challenge), and a CSRF token plus a
    same-origin check on every POST (403)."""

    def __init__(self, app: Any, auth: Auth) -> None:
        super().__init__(app)
        self.auth = auth

    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        if any(
            request.url.path == p or (p.endswith("/") and request.url.path.startswith(p)) for p in OPEN_PATHS
        ):
            return await call_next(request)
        identity = self.auth.identity(request.headers)
        if identity is None:
            return PlainTextResponse(
                "authentication required\n",
                status_code=401,
                headers={"WWW-Authenticate": self.auth.challenge()},
            )
        request.state.csrf = self.auth.csrf_token(identity)
        if request.method == "POST":
            if not same_origin(request.headers, request.url.scheme):
                return _problem(403, "cross-origin request refused")
            given = request.headers.get(CSRF_HEADER)
            if given is None and request.headers.get("content-type", "").startswith(
                ("application/x-www-form-urlencoded", "multipart/form-data")
            ):
                await request.body()  # read whole first: the endpoint then reads the same fields again
                given = str((await request.form()).get(CSRF_FIELD) or "") or None
            if not self.auth.csrf_ok(identity, given):
                return _problem(
                    403, f"missing or bad CSRF token ({CSRF_HEADER} header or {CSRF_FIELD} field)"
                )
        return await call_next(request)


def _query(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.query_params.items() if v}


def _limit(params: dict[str, str]) -> int:
    try:
        return int(params.get("limit") or DEFAULT_LIMIT)
    except ValueError:
        raise FilterError(f"limit: {params['limit']!r} is not a number (1..{MAX_LIMIT})") from None


async def _form(request: Request) -> dict[str, str]:
    """A POST's fields, from a form or a JSON object."""
    if request.headers.get("content-type", "").startswith("application/json"):
        body = await request.json()
        return {k: str(v) for k, v in body.items()} if isinstance(body, dict) else {}
    form = await request.form()
    return {k: str(v) for k, v in form.items()}


def create_app(reader: Reader, auth: Auth | None = None) -> Starlette:
    """The console for ``reader``'s agent and scope, guarded by ``auth`` (none: loopback use only)."""
    auth = auth or Auth()
    templates = Jinja2Templates(directory=str(_PACKAGE / "templates"))

    def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
        return templates.TemplateResponse(
            request,
            name,
            {"agent": reader.name, "csrf": request.state.csrf, "states": STATES, **context},
            status_code=status,
        )

    async def index(request: Request) -> Response:
        return page(request, "overview.html", overview=await run_in_threadpool(reader.overview))

    async def objects(request: Request) -> Response:
        params = _query(request)
        try:
            filters = Filters.of(params)
            listed = await run_in_threadpool(reader.objects, filters, _limit(params), params.get("continue"))
        except (FilterError, TokenError) as exc:
            return page(request, "objects.html", 400, page=None, params=params, error=str(exc))
        return page(request, "objects.html", page=listed, params=params, error="")

    async def one_object(request: Request) -> Response:
        key = request.path_params["key"]
        detail = await run_in_threadpool(reader.object, key)
        if detail is None:
            return page(request, "missing.html", 404, key=key)
        return page(request, "object.html", detail=detail)

    async def api_overview(request: Request) -> Response:
        return _json(await run_in_threadpool(reader.overview))

    async def api_objects(request: Request) -> Response:
        params = _query(request)
        try:
            filters = Filters.of(params)
            listed = await run_in_threadpool(reader.objects, filters, _limit(params), params.get("continue"))
        except (FilterError, TokenError) as exc:
            return _problem(400, str(exc))
        return _json(listed)

    async def api_object(request: Request) -> Response:
        key = request.path_params["key"]
        sides = request.query_params.get("sides", "true") != "false"
        detail = await run_in_threadpool(lambda: reader.object(key, sides=sides))
        return _problem(404, f"no key {key}") if detail is None else _json(detail)

    async def api_replay_one(request: Request) -> Response:
        key = request.path_params["key"]
        result = await run_in_threadpool(reader.replay, key)
        return _problem(404, f"no key {key}") if result is None else _json(result)

    async def api_replay(request: Request) -> Response:
        fields = await _form(request)
        rule, cause = fields.get("rule", ""), fields.get("cause", "")
        try:
            result = await run_in_threadpool(reader.replay_parked, rule, cause)
        except ValueError as exc:  # FilterError too
            return _problem(400, str(exc))
        return _json(result)

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    routes = [
        Route("/", index),
        Route("/objects", objects),
        Route("/objects/{key:path}", one_object),
        Route("/api/overview", api_overview),
        Route("/api/objects", api_objects),
        Route("/api/objects/{key:path}/replay", api_replay_one, methods=["POST"]),
        Route("/api/objects/{key:path}", api_object),
        Route("/api/replay", api_replay, methods=["POST"]),
        Route("/healthz", healthz),
        Mount("/static", app=StaticFiles(directory=str(_PACKAGE / "static")), name="static"),
    ]
    return Starlette(routes=routes, middleware=[Middleware(Guard, auth=auth)])
