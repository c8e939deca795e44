"""The HTTP server: FastAPI for REST, the MCP SDK's streamable HTTP at ``/mcp``.

:func:`create_app` builds the ASGI application around a
:class:`~kronika.server.service.Service` and a :class:`~kronika.server.keys.KeyStore`.
Outermost first: the body size limit, CORS (only when origins are configured), then
``/mcp`` (authenticated by the same keys) or the FastAPI routes (one module per
resource, :mod:`kronika.server.routes`). Errors become
``{"error": <class>, "message": …}`` with the status of
:data:`kronika.server.access.STATUS`; a request the schema refuses is a 422 naming
each bad field; anything unexpected is a 500 that says so and nothing more.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kronika import errors
from kronika.server import openapi, routes
from kronika.server.access import Forbidden, Unauthenticated, caller_for, status_for
from kronika.server.keys import KeyStore
from kronika.server.limits import ASGIApp, BodyLimit, BodyTooLarge, RateLimiter, Receive, Send
from kronika.server.limits import Scope as AsgiScope
from kronika.server.service import Service

log = logging.getLogger("kronika.server")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """How the server guards itself (``kronika serve`` flags)."""

    max_body_bytes: int = 4 * 1024 * 1024
    rate_per_second: float = 50.0
    """Requests a second per API key on average; 0 turns the limit off."""
    burst: int = 100
    cors_origins: tuple[str, ...] = ()
    """Origins a browser may call from; none (the default) sends no CORS headers."""
    mcp: bool = True
    host: str = "127.0.0.1"


def _error(status: int, name: str, message: str, **extra: Any) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": name, "message": message, **extra}, status, headers=headers)


def _got(value: Any) -> str:
    """`` (got 'planet')``: the refused value, when it is short text or a number."""
    if isinstance(value, str | int | float) and len(repr(value)) <= 60:
        return f" (got {value!r})"
    return ""


def _field(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc) or "request"


def _no_telemetry() -> dict[str, Any]:
    """FastAPI's own OpenTelemetry (0.16x and later) turned off: kronika sends nothing
    anywhere but to the providers it is configured with, whatever OpenTelemetry
    providers or ``FASTAPI_OTEL_AUTO_CONFIGURE`` the process has. Earlier FastAPI
    releases have no such telemetry and no such argument."""
    if "telemetry" not in inspect.signature(FastAPI.__init__).parameters:
        return {}
    off = ("tracing", "metrics", "logs", "operation_spans", "auto_configure")
    return {"telemetry": dict.fromkeys(off, False)}


def create_app(service: Service, keys: KeyStore, config: ServerConfig | None = None) -> ASGIApp:
    """The whole server as one ASGI application (what uvicorn runs)."""
    config = config or ServerConfig()
    mcp_app: ASGIApp | None = None
    mcp_server: Any = None
    if config.mcp:
        mcp_server, mcp_app = _mcp_parts(service, config)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if mcp_server is not None:
                await stack.enter_async_context(mcp_server.session_manager.run())
            yield

    app = FastAPI(
        title="kronika",
        version="1",
        summary="Long-term memory for LLM agents",
        description="Every route but /healthz needs an API key: `Authorization: Bearer kro_…` "
        "or `X-API-Key: kro_…` (`kronika keys create`).",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        **_no_telemetry(),
    )
    app.state.service = service
    app.state.keys = keys
    app.state.rate = RateLimiter(config.rate_per_second, config.burst)

    _docs(app)
    _ui(app)
    routes.include(app)
    _handle_errors(app)
    openapi.install(app)

    outer: ASGIApp = app
    if mcp_app is not None:
        outer = _with_mcp(app, _authenticated(mcp_app, keys, app.state.rate))
    if config.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        outer = CORSMiddleware(
            outer,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type", "Mcp-Session-Id"],
        )
    return BodyLimit(outer, config.max_body_bytes)


def _ui(app: FastAPI) -> None:
    """``/``: the memory browser, a page and its script and styles from the package
    (nothing from the network); it signs in with an API key and calls ``/v1``."""
    from pathlib import Path

    from fastapi.responses import FileResponse
    from starlette.staticfiles import StaticFiles

    folder = Path(__file__).parent / "ui"
    app.mount("/ui", StaticFiles(directory=folder), name="ui")

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(folder / "index.html", media_type="text/html")

    @app.get("/favicon.ico", include_in_schema=False)
    def icon() -> FileResponse:  # what a browser asks for on a page that names no icon
        return FileResponse(folder / "favicon.svg", media_type="image/svg+xml")


def _docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI from the files the ``swagger-ui-bundle`` package ships, so
    the page loads nothing from the network."""
    from fastapi.responses import HTMLResponse

    try:
        import swagger_ui_bundle
    except ImportError:
        assets = None
    else:
        from starlette.staticfiles import StaticFiles

        assets = str(swagger_ui_bundle.swagger_ui_path)
        app.mount("/docs/assets", StaticFiles(directory=assets), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        if assets is None:
            return HTMLResponse(
                "<p>The API documentation page needs the <code>swagger-ui-bundle</code> "
                "package (part of <code>kronika[server]</code>); the OpenAPI document is at "
                '<a href="/openapi.json">/openapi.json</a>.</p>'
            )
        from fastapi.openapi.docs import get_swagger_ui_html

        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="kronika API",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css",
            swagger_favicon_url="/docs/assets/favicon-32x32.png",
        )


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed(app: FastAPI, scope: AsgiScope, told: str) -> list[str]:
    """The methods the resource at ``scope``'s path takes: of every route template
    that matches the path (a path may have one route per method, so the route that
    refused the request, which ``told``, does not know them all), the one with the
    most literal parts names the resource (``/agents/a/memory/distill`` is the distill
    action, not the item ``distill``). The static files mounted under ``/ui`` and
    ``/docs/assets`` take GET and HEAD."""
    from starlette.routing import Match, Mount, compile_path

    path = scope.get("path", "")
    methods: set[str] = set()
    found: dict[int, set[str]] = {}
    for route in app.router.routes:
        if isinstance(route, Mount):
            if route.matches(scope)[0] is not Match.NONE:
                methods |= {"GET", "HEAD"}
            continue
        for template, taken in _templates(route):
            if compile_path(template)[0].match(path):
                found.setdefault(_literal_parts(template), set()).update(taken)
    if found:
        methods |= found[max(found)]
    else:
        methods |= {m.strip() for m in told.split(",") if m.strip()}
    return sorted(methods, key=lambda m: (_METHODS.index(m) if m in _METHODS else 99, m))


def _templates(route: Any) -> list[tuple[str, set[str]]]:
    """``(path template, methods)`` of a route, or of each route of an included
    router (FastAPI 0.16x keeps those as one object)."""
    contexts = getattr(route, "effective_route_contexts", None)
    if contexts is not None:
        return [(c.path, set(c.methods or ())) for c in contexts()]
    if isinstance(getattr(route, "path", None), str):
        return [(route.path, set(getattr(route, "methods", None) or ()))]
    return []


def _literal_parts(path: str) -> int:
    return sum(1 for part in path.split("/") if part and not part.startswith("{"))


def _handle_errors(app: FastAPI) -> None:
    @app.exception_handler(errors.KronikaError)
    async def kronika_error(_: Request, exc: errors.KronikaError) -> JSONResponse:
        from kronika.server.limits import RateLimited

        if isinstance(exc, RateLimited):
            return _error(429, "RateLimited", str(exc))
        status = status_for(exc)
        if status >= 500:
            log.warning("%s: %s", type(exc).__name__, exc)
        return _error(status, type(exc).__name__, str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{_field(e.get('loc', ()))}: {e.get('msg', 'invalid')}{_got(e.get('input'))}"
            for e in exc.errors()
        ]
        detail = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in exc.errors()
        ]
        return _error(422, "InvalidInput", "; ".join(problems), detail=detail)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, BodyTooLarge):  # FastAPI wraps what breaks reading the body
            return _error(413, "RequestTooLarge", str(cause))
        if isinstance(cause, RecursionError):  # json.loads of arrays inside arrays…
            return _error(422, "InvalidInput", "the JSON body is nested too deeply to read")
        if exc.status_code == 405:  # RFC 9110: say which methods the path takes
            answer = _error(405, "HTTPError", str(exc.detail))
            told = (exc.headers or {}).get("Allow", "")
            answer.headers["Allow"] = ", ".join(_allowed(app, request.scope, told))
            return answer
        return _error(exc.status_code, "HTTPError", str(exc.detail))

    @app.exception_handler(BodyTooLarge)
    async def too_large(_: Request, exc: BodyTooLarge) -> JSONResponse:
        return _error(413, "RequestTooLarge", str(exc))

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return _error(500, "InternalError", f"unexpected {type(exc).__name__} (a bug in kronika)")


def _mcp_parts(service: Service, config: ServerConfig) -> tuple[Any, ASGIApp]:
    from kronika.server.mcp import build_mcp

    server = build_mcp(service)
    starlette_app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        host=config.host,
        max_request_body_size=config.max_body_bytes,
    )
    return server, starlette_app


def _authenticated(app: ASGIApp, keys: KeyStore, rate: RateLimiter) -> ASGIApp:
    """``app`` behind the API keys: the caller goes into the scope for the tools."""
    from kronika.server.mcp import CALLER

    async def guarded(scope: AsgiScope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        auth = headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else headers.get("x-api-key")
        try:
            key = keys.verify(token) if token else None
        except errors.KronikaError as exc:  # a damaged keys file: said, never a 500
            await _send(send, status_for(exc), type(exc).__name__, str(exc))
            return
        if key is None:
            failure = Unauthenticated("a valid API key is needed")
            await _send(send, 401, type(failure).__name__, str(failure))
            return
        if not rate.allow(key.id):
            await _send(send, 429, "RateLimited", "too many requests for this API key")
            return
        user = headers.get("x-kronika-user") or None
        channel = headers.get("x-kronika-channel") or None
        try:
            scope[CALLER] = caller_for(key, user, channel)
        except Forbidden as refused:
            await _send(send, 403, type(refused).__name__, str(refused))
            return
        await app(scope, receive, send)

    return guarded


def _with_mcp(rest: ASGIApp, mcp: ASGIApp) -> ASGIApp:
    async def dispatch(scope: AsgiScope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == "/mcp" or path.startswith("/mcp/"):
            await mcp(scope, receive, send)
        else:
            await rest(scope, receive, send)

    return dispatch


async def _send(send: Send, status: int, name: str, message: str) -> None:
    response = _error(status, name, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": response.raw_headers,
        }
    )
    await send({"type": "http.response.body", "body": response.body})
